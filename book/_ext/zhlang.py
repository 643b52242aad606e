"""Sphinx extension: the book in two languages (issue 30). Loaded by both builds; ``language`` says which one runs.

Both editions:

* a language switch in the header of every page (``assets/js/book-lang.js``): it opens the same section of the page
  in the other language (the two have the same headings in the same order: ``scripts/zh.py check``); an English page
  without a Chinese edition leads to the Chinese contents;
* ``<link rel="alternate" hreflang=…>`` in the page head names the other edition's page.

The Chinese edition (``language = zh_CN``, built by ``scripts/zh.py build`` from the same sources, into
``_build/html/zh/``):

* a reference to a page that is not translated (``{ref}`第 7 章 <ch07>```, ``{doc}``, ``{term}``) links to the English
  page, through the English build's ``objects.inv``, and carries a small 英文 label; ``{doc}`book/how-to-run``` finds
  the translated ``book/how-to-run.zh``;
* the directive ``{zh-contents}`` lists every part and chapter of ``_toc.yml``: translated ones by their Chinese
  title, the others as links to the English page, labelled 英文;
* ``zh/index.html`` opens the Chinese landing page (``index.zh``), and the build fails naming any CJK character its
  pages show that the offline font subset (``make static``) lacks.
"""
from __future__ import annotations

import posixpath
import re
from pathlib import Path

import yaml
from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

ZH_DIR = "zh"                                   # the Chinese edition's folder inside the English book
UI = yaml.safe_load(Path(__file__).with_name("zh-ui.yml").read_text(encoding="utf-8"))
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
ROMAN = {"I": "一", "II": "二", "III": "三", "IV": "四", "V": "五", "VI": "六", "VII": "七", "VIII": "八"}
LOG = logging.getLogger(__name__)
_INVENTORY: dict[tuple[str, str], tuple[str, str]] = {}   # (type, lower-case name) → (uri, display name)


def is_zh(app) -> bool:
    return str(app.config.language or "").startswith("zh")


def zh_caption(caption: str) -> str:
    """'Part I · Foundations · 基础 (1–5)' → '第一部分 · 基础 (1–5)'; 'Appendices · 附录' → '附录'."""
    zh = next((p.strip() for p in reversed(caption.split(" · ")) if CJK.search(p)), caption)
    m = re.match(r"Part ([IVX]+)\b", caption)
    return f"第{ROMAN[m.group(1)]}部分 · {zh}" if m and m.group(1) in ROMAN else zh


def english_title(md: Path) -> str:
    """'7. 并行策略 · Parallelism strategies' from a page's first heading and its Chinese subtitle (*…*)."""
    text = md.read_text(encoding="utf-8") if md.exists() else ""
    head = re.search(r"^#\s+(.+)$", text, re.M)
    title = head.group(1).strip() if head else md.stem
    sub = re.search(r"^\*([^*\n]*[\u4e00-\u9fff][^*\n]*)\*", text[head.end():] if head else "", re.M)
    if not sub:
        return title
    num = re.match(r"(\d+\.)\s+(.*)", title)
    return f"{num.group(1)} {sub.group(1)} · {num.group(2)}" if num else f"{sub.group(1)} · {title}"


def other_edition(app, pagename: str) -> tuple[str, bool]:
    """(relative URL of this page in the other edition, whether it is the same page rather than the contents)."""
    up = "../" * pagename.count("/")
    if is_zh(app):
        if pagename in ("search", "genindex"):
            return f"{up}../{pagename}.html", True
        return f"{up}../{pagename.removesuffix('.zh')}.html", True
    if pagename in ("search", "genindex"):
        return f"{up}{ZH_DIR}/{pagename}.html", True
    if (Path(app.srcdir) / f"{pagename}.zh.md").exists():
        return f"{up}{ZH_DIR}/{pagename}.zh.html", True
    return f"{up}{ZH_DIR}/{app.config.root_doc}.zh.html", False


def page_context(app, pagename, templatename, context, doctree):
    url, same = other_edition(app, pagename)
    if is_zh(app):
        text, tip, lang = UI["switch_to_en"], UI["tooltip_to_en"], "en"
    else:
        text, tip, lang = UI["switch_to_zh"], UI["tooltip_to_zh" if same else "tooltip_to_zh_index"], "zh-Hans"
    context.setdefault("header_buttons", []).insert(0, {
        "type": "javascript", "javascript": f"bookLang('{url}', {int(same)})", "text": text, "tooltip": tip,
        "icon": "fas fa-language", "label": "lang-switch"})
    context["metatags"] = context.get("metatags", "") + f'\n<link rel="alternate" hreflang="{lang}" href="{url}" />'


def _load_inventory(app) -> None:
    from sphinx.util.inventory import InventoryFile

    path = Path(app.srcdir) / app.config.zh_english_inventory
    if not path.exists():
        LOG.warning(f"{path} is missing: build the English book first (untranslated pages link to it)")
        return
    with path.open("rb") as f:
        inv = InventoryFile.load(f, "", posixpath.join)
    for typ, entries in inv.items():
        for name, (_project, _version, uri, disp) in entries.items():
            _INVENTORY[(typ, name.lower())] = (uri, name if disp == "-" else disp)


def missing_reference(app, env, node, contnode):
    """A reference the Chinese edition cannot resolve: a translated page by its .zh name, else the English page."""
    if not is_zh(app) or node.get("refdomain") != "std":
        return None
    from sphinx.util import docname_join

    typ, target = node.get("reftype"), node.get("reftarget", "")
    fromdoc = node.get("refdoc", env.docname)
    if typ == "doc":
        docname = docname_join(fromdoc, target)
        if docname + ".zh" in env.found_docs:
            ref = nodes.reference("", "", internal=True, refuri=app.builder.get_relative_uri(fromdoc, docname + ".zh"))
            title = contnode.astext() if node.get("refexplicit") else env.titles[docname + ".zh"].astext()
            ref += nodes.inline(title, title)
            return ref
        key = ("std:doc", docname.lower())
    elif typ in ("ref", "numref"):
        key = ("std:label", target.lower())
    elif typ == "term":
        key = ("std:term", target.lower())
    else:
        return None
    if key not in _INVENTORY:
        return None
    uri, disp = _INVENTORY[key]
    ref = nodes.reference("", "", internal=False, reftitle=UI["en_title"],
                          refuri="../" * fromdoc.count("/") + app.config.zh_english_root + uri)
    ref += contnode if node.get("refexplicit") else contnode.__class__(disp, disp)
    ref += nodes.inline("", UI["en_mark"], classes=["book-en"])
    return ref


class ZhContents(SphinxDirective):
    """Every part and chapter of _toc.yml: the translated ones by their Chinese title, the rest linked in English."""

    def run(self):
        src = Path(self.env.srcdir)
        self.env.note_dependency(str(src / "_toc.yml"))
        toc = yaml.safe_load((src / "_toc.yml").read_text(encoding="utf-8"))
        up = "../" * self.env.docname.count("/") + self.config.zh_english_root
        out = []
        for part in toc.get("parts", []):
            items = nodes.bullet_list(classes=["book-zh-contents"])
            for c in part["chapters"]:
                stem = c["file"].removesuffix(".ipynb").removesuffix(".md")
                para = nodes.paragraph()
                if (src / f"{stem}.zh.md").exists():
                    xref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=f"/{stem}.zh",
                                                 refexplicit=False, refwarn=True, refdoc=self.env.docname)
                    xref += nodes.inline(stem, stem)
                    para += xref
                else:
                    title = english_title(src / f"{stem}.md")
                    ref = nodes.reference("", "", internal=False, refuri=f"{up}{stem}.html", reftitle=UI["en_title"])
                    ref += nodes.Text(title)
                    ref += nodes.inline("", UI["en_mark"], classes=["book-en"])
                    para += ref
                items += nodes.list_item("", para)
            out += [nodes.rubric(text=zh_caption(part.get("caption", ""))), items]
        return out


def build_finished(app, exc):
    if exc is not None or not is_zh(app) or app.builder.format != "html":
        return
    out = Path(app.outdir)
    if app.config.root_doc != "index":
        (out / "index.html").write_text(
            f'<!DOCTYPE html><html lang="zh-Hans"><head><meta charset="utf-8"><title>{UI["redirect"]}</title>'
            f'<meta http-equiv="refresh" content="0; url={app.config.root_doc}.html" /></head>'
            f'<body><a href="{app.config.root_doc}.html">{UI["redirect"]}</a></body></html>\n', encoding="utf-8")
    # the download menu links _sources/<docname>.md and .ipynb; a writer that took ".zh" for a suffix
    # (Path.with_suffix) leaves them as name.md / name.ipynb: put them where the links point
    for docname in app.env.found_docs:
        if docname.endswith(".zh"):
            for ext in (".md", ".ipynb"):
                want, got = out / "_sources" / f"{docname}{ext}", out / "_sources" / f"{docname[:-3]}{ext}"
                if got.exists():             # (the zh build has no page of that name)
                    got.replace(want)
    font = out / "_static" / "fonts" / "book-cjk.woff2"
    if not font.exists():
        return                               # no font subset (fonts-noto-cjk absent): the reader's system fonts
    from fontTools.ttLib import TTFont

    cmap = TTFont(str(font)).getBestCmap()
    shown: dict[str, str] = {}
    for page in sorted(out.rglob("*.html")):
        for ch in CJK.findall(page.read_text(encoding="utf-8", errors="replace")):
            shown.setdefault(ch, page.relative_to(out).as_posix())
    # and what scripts write on the page: the search page's messages, the copy button's tooltips
    for js in ("translations.js", "copybutton.js"):
        path = out / "_static" / js
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
        if js == "translations.js":        # only the search messages of Sphinx's catalogue are shown here
            text = "".join(v for k, v in re.findall(r'"([^"]*)":\s*"([^"]*)"', text) if "earch" in k)
        for ch in CJK.findall(text):
            shown.setdefault(ch, f"_static/{js}")
    missing = sorted(ch for ch in shown if ord(ch) not in cmap and not ch.isspace())
    if missing:
        LOG.warning(f"{len(missing)} CJK character(s) on the Chinese pages are not in the offline font subset "
                    f"({font.name}): {''.join(missing[:60])} (first on {shown[missing[0]]}); put interface text in "
                    "book/_ext/zh-ui.yml, then `make static` and build again")


def setup(app):
    app.add_config_value("zh_english_inventory", "_build/html/objects.inv", "env")
    app.add_config_value("zh_english_root", "../", "env")   # the English book, seen from the Chinese one's root
    app.add_js_file("book-lang.js", defer="defer")
    app.add_directive("zh-contents", ZhContents)
    app.connect("builder-inited", lambda a: (_load_inventory(a), a.add_css_file("book-lang.css")) if is_zh(a) else None)
    app.connect("missing-reference", missing_reference)
    app.connect("html-page-context", page_context, priority=910)
    app.connect("build-finished", build_finished, priority=600)   # after bookpages'
    return {"parallel_read_safe": True, "parallel_write_safe": True}
