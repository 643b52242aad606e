// The book's search ranking (issue 29). Sphinx's html_search_scorer: Sphinx pastes this file into language_data.js,
// which only search.html loads (book/_ext/bookpages.py sets the option and adds "bookcounts" to the index).
// Sphinx alone scores a page 15 when a query word is in any of its headings and 5 when it is only in its text, then
// sorts equal scores by title, so the chapter about a term could come 24th of 29. Here a page ranks by tier:
//   2: its title holds every word of the query;  1: one of its headings does;  0: only its text does;
// and within a tier by how many of its headings hold the query, then by how often its text does (bookcounts: per
// stemmed term, [page, count, page, count, …] for the pages that use it twice or more). A heading's own result sits
// just under its page; a glossary definition (an index entry, #term-…) comes after every page whose title or
// headings hold the term and before the pages that only mention it.
var Scorer = {
  objNameMatch: 11, objPartialMatch: 6, objPrio: {0: 15, 1: 5, 2: -5}, objPrioDefault: 0,
  title: 15, partialTitle: 7, term: 5, partialTerm: 2,
  score: (result) => BookSearch.score(result),
};

var BookSearch = {
  words: [],      // the query's words, lower case (titles and headings are matched on these)
  stems: [],      // the query's stemmed terms (the index's keys)
  _headings: null,
  _key: "",

  capture(query, stems) {
    const stop = typeof stopwords !== "undefined" ? stopwords : [];
    const split = typeof splitQuery !== "undefined" ? splitQuery : (q) => q.split(/\s+/);
    BookSearch.words = split(query.toLowerCase().trim()).filter((w) => w && stop.indexOf(w) === -1);
    BookSearch.stems = [...stems];
    BookSearch._headings = null;
  },

  holds(text) {
    const t = (text || "").toLowerCase();
    return BookSearch.words.length > 0 && BookSearch.words.every((w) => t.includes(w));
  },

  // page index -> number of its headings (not its title) that hold every query word; once per query
  headings() {
    const key = BookSearch.words.join(" ");
    if (BookSearch._headings && BookSearch._key === key) return BookSearch._headings;
    const found = new Map();
    for (const [heading, places] of Object.entries(Search._index.alltitles || {})) {
      if (!BookSearch.holds(heading)) continue;
      for (const [file, id] of places) if (id !== null) found.set(file, (found.get(file) || 0) + 1);
    }
    BookSearch._headings = found;
    BookSearch._key = key;
    return found;
  },

  count(file) {
    const counts = Search._index.bookcounts || {};
    if (!BookSearch.stems.length) return 1;
    let sum = 0;
    for (const stem of BookSearch.stems) {
      const row = counts[stem] || [];
      let c = 1;   // a page in the results uses the term at least once
      for (let i = 0; i < row.length; i += 2) if (row[i] === file) { c = row[i + 1]; break; }
      sum += Math.log2(1 + c);
    }
    return sum / BookSearch.stems.length;
  },

  page(file) {
    const index = Search._index;
    const tier = BookSearch.holds(index.titles[file]) ? 2 : BookSearch.headings().has(file) ? 1 : 0;
    const headings = Math.min(5, BookSearch.headings().get(file) || 0);
    return tier * 100 + 10 * headings + Math.min(49, 8 * BookSearch.count(file));
  },

  score(result) {
    const [docname, title, anchor, descr, score] = result;
    if (descr !== null && descr !== undefined) return score;           // an object (API) entry: Sphinx's score
    const file = Search._index.docnames.indexOf(docname);
    if (file < 0 || !BookSearch.words.length) return score;
    if (anchor && anchor.startsWith("#term-")) return 99.5;            // a glossary definition
    return BookSearch.page(file) - (anchor ? 0.5 : 0);                 // a heading just under its page
  },
};

// The scorer sees one result at a time, not the query: keep the query's words and stems as Search parses them.
if (typeof Search !== "undefined" && !Search._bookParse) {
  Search._bookParse = Search._parseQuery;
  Search._parseQuery = (query) => {
    const parsed = Search._bookParse(query);
    BookSearch.capture(parsed[0], parsed[1]);
    return parsed;
  };
}
