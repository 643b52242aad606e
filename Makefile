# The book's two entry points on a fresh machine:  `make book`  and  `make test`  (each installs first).
# Everything runs in .venv with the pinned requirements.txt. On a GPU machine without the venv (e.g. the
# recorded-H200 runs) use `make test-gpu PY=python3`.
SHELL := /bin/bash
VENV  ?= .venv
PY    ?= $(VENV)/bin/python
JOBS  ?= 2
NB    ?=
export BOOK_QUIET := 1
export PYTHONHASHSEED := 0

.PHONY: help install notebooks check glossary static book book-zh test unit nbval bench bench-io record-h200 test-gpu clean \
        weights browsercheck student slides

help:
	@echo "make book      install, then build the static book into _build/html (English) and _build/html/zh (中文)"
	@echo "make test      install, then unit tests + nbval of every notebook + strict book build + pairing check"
	@echo "make notebooks [NB=chapters/01-overview]   execute .md -> .ipynb (the stored outputs)"
	@echo "make nbval     every notebook re-run and compared with its stored outputs (portable numeric mode)"
	@echo "make check     pairing, glossary and 中文 sync checks (fail naming the chapter/section that drifted)"
	@echo "make book-zh   the Chinese edition only, into _build/html/zh (after make book); scripts/zh.py todo lists what to translate"
	@echo "make weights   page weights of the built book (own vs shared KB; fails over 500 KB or on a broken link)"
	@echo "make browsercheck   every built page in headless Chromium (make test checks BROWSER_PAGES only)"
	@echo "make student [EXECUTE=1]   student + instructor notebooks into _build/student, _build/instructor"
	@echo "make slides    reveal.js slides per chapter into _build/slides (offline: reveal.js, MathJax, plotly.js local)"
	@echo "make test-gpu PY=python3   on a GPU machine: helpers' tests + every notebook executed fresh on the GPU"
	@echo "make record-h200 PY=python3   on the H200: write reference JSON under assets/measurements/h200/"

$(VENV)/.installed: requirements.txt pyproject.toml
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -r requirements.txt
	$(VENV)/bin/python -m pip install -q --no-deps -e .
	touch $@

install: $(VENV)/.installed

notebooks: install glossary
	$(PY) scripts/notebooks.py execute $(NB)
	$(PY) scripts/zh.py notebooks $(NB)

check: install
	$(PY) scripts/notebooks.py check
	$(PY) scripts/glossary.py --check
	$(PY) scripts/zh.py check

glossary: install
	$(PY) scripts/glossary.py

# plotly.js, MathJax and a subset CJK webfont into _build/vendor, from installed packages (nothing vendored in git;
# not under _static/, which Jupyter Book would load on every page). book/_ext/bookpages.py serves them.
static: install
	$(PY) scripts/static_assets.py

book: install glossary static
	$(VENV)/bin/jupyter-book build . -W -n --keep-going
	$(PY) scripts/zh.py build
	@echo "book: $$(pwd)/_build/html/index.html  中文: $$(pwd)/_build/html/zh/index.html"

# The Chinese edition (中文版, issue 30): the translated pages (name.zh.md) with the English notebooks' outputs, read
# from the same tree with language zh_CN; untranslated pages link to the English book, which must be built first.
book-zh: install glossary static
	$(PY) scripts/zh.py build

unit: install
	$(PY) -m pytest -q -n $(JOBS) --durations=40 tests

# Stored outputs are written (make notebooks) and compared (here) in one portable numeric mode, the same on any
# x86-64 CPU: scripts/numeric_env.py sets it, and says why. The float-sensitive notebooks (its KERNEL_CHECK) are
# compared under other kernels and another hash seed instead: the proof that their outputs depend on neither.
# scripts/nbval_modes.py starts each notebook's kernel in its mode, in one pytest run over all notebooks.
NUMERIC = $(PY) scripts/numeric_env.py
nbval: install
	$(NUMERIC) $(PY) -m pytest -q -n $(JOBS) --dist loadfile --nbval --nbval-current-env \
	  --nbval-sanitize-with nbval_sanitize.cfg -p no:randomly -p scripts.nbval_modes --durations=10 \
	  $$($(PY) scripts/notebooks.py list)

# The browser check inside make test: a representative set (the index and search; chapter 8: maths, figures, the
# slide deck and the screenshots; chapter 28: the heaviest figures; a Chinese page); the static checks (links, page
# weights, downloads) still cover every page. make browsercheck opens every page.
BROWSER_PAGES ?= index.html search.html \
                 chapters/08-communication/communication.html chapters/28-performance-modelling/performance_modelling.html \
                 zh/chapters/08-communication/communication.zh.html
STAGE = $(MAKE) --no-print-directory
test: install
	@$(PY) scripts/stages.py preflight="$(PY) scripts/preflight.py" check="$(STAGE) check" unit="$(STAGE) unit" \
	  nbval="$(STAGE) nbval" book="$(STAGE) book" \
	  browsercheck="$(STAGE) browsercheck BROWSER_ARGS='$(foreach p,$(BROWSER_PAGES),--pages $(p))'"

# ---- the book as readers and instructors use it (issue 16) ----
weights: install
	$(PY) scripts/pageweights.py --links _build/html

# Headless Debian chromium through Playwright (no browser download); screenshots into _build/screenshots.
# One slide deck (chapter 08) is checked with the pages; without reveal.js (npm missing at `make static`) it is skipped
# with a note.
browsercheck: install
	$(PY) scripts/pageweights.py --links _build/html
	@if [ -f _build/vendor/reveal.js/dist/reveal.js ]; then $(PY) scripts/student.py chapters/08-communication --slides; \
	else echo "note: no reveal.js in _build/vendor (make static needs npm): the slide deck is not checked"; fi
	$(PY) scripts/browsercheck.py _build/html $(BROWSER_ARGS)

EXECUTE ?=
student: install
	$(PY) scripts/student.py $(NB) $(if $(EXECUTE),--execute)

# Offline decks: reveal.js, MathJax 3 and plotly.js from _build/vendor (make static; reveal.js comes from npm), copied
# into _build/slides/_vendor beside the decks; no CDN.
slides: install static
	$(PY) scripts/student.py $(NB) --slides

bench: install
	$(PY) scripts/bench.py

bench-io: install
	$(PY) scripts/bench_io.py

# ---- GPU machine targets (no venv: the machine's own torch/cupy/NCCL; notebook stack from wheels) ----
test-gpu:
	$(PY) -m pytest -q tests
	$(PY) scripts/notebooks.py run-fresh --out $${OUT:-_build/fresh}

record-h200:
	$(PY) scripts/record.py --dest assets/measurements/h200

clean:
	rm -rf _build
