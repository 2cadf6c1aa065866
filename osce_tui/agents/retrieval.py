"""BM25 retrieval over a case's history facts.

Each fact becomes one document: its canonical question, paraphrases, keywords
and the vocabulary of its category, analysed by ``lexicon.analyse`` (stems +
concept tokens). A query is analysed the same way into *units* (a word or a
phrase with the terms it may match). Two numbers decide a match:

- the BM25 score of the fact for the query's terms (ranking), and
- *coverage*: the IDF-weighted share of the query's units the fact matches.
  A query word the case never mentions (say "rash" in a chest-pain case) gets
  the highest IDF, so a fact that matches only the generic words of the
  question ("pain", "any") covers little and is rejected: the patient gives
  the default answer instead of a wrong fact.

Several facts per utterance are found greedily: after the best fact, the
units it did not cover are searched again ("Do you smoke or drink?").

People's names (the patient's and the proxy speaker's) are dropped from
documents and queries: "Has Leo had..." is not a question about "leo". Some
categories are gated on the question's frame (family history needs a
relative; a modifiers fact needs a change, pain or treatment).

Indexes are built once per case and cached by (case id, content hash).
"""

from __future__ import annotations

import math
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from ..domain.case import Case, HistoryFact
from .lexicon import QUALIFIER_CONCEPTS, Unit, analyse, category_terms, stem

K1 = 1.2
B = 0.5  # facts with many paraphrases are long; soften the length penalty

# Decision thresholds, calibrated on the "dev" split of
# benchmarks/patient_paraphrases.toml (see bench_patient.py); on dev,
# MIN_COVERAGE 0.45-0.5 and FILLER_SHARE 0.05-0.2 sit on one plateau.
MIN_COVERAGE = 0.5
MIN_SCORE = 1.0
EXTRA_MIN_COVERAGE = 0.3  # share of the whole query a second fact must explain
EXTRA_MIN_SCORE_RATIO = 0.5  # ... and score at least this share of the best fact's score
MAX_FACTS_PER_CLAUSE = 3
# A word the case never uses and the lexicon does not know ("moment", "kick")
# is most likely filler; it weighs this share of an unseen clinical concept.
FILLER_SHARE = 0.2
# ... while an unseen clinical concept weighs this share of the highest IDF.
CONCEPT_SHARE = 1.0

# Facts about someone else or a specific frame are only reachable when the
# question names that frame: "Do you have any medical conditions?" must not
# pull the family history just because it says "medical conditions" too, and
# "Do you have a cough?" must not pull "coughing makes the pain worse": a
# modifiers fact answers what changes the symptom, so the question has to ask
# about a change, a pain, or a treatment.
GATED_CATEGORIES: dict[str, frozenset[str]] = {
    "family": frozenset({"@family"}),
    "modifiers": frozenset({"@aggravate", "@relieve", "@pain", "@medication"}),
}


@dataclass(frozen=True)
class Match:
    fact_id: str
    score: float
    coverage: float
    matched_units: frozenset[str]


@dataclass
class FactIndex:
    """BM25 statistics for one case's history facts."""

    facts: list[HistoryFact]
    doc_terms: list[Counter[str]]
    doc_len: list[int]
    avg_len: float
    idf: dict[str, float]
    unknown_idf: float
    by_id: dict[str, HistoryFact] = field(default_factory=dict)
    ignored: frozenset[str] = frozenset()

    @classmethod
    def build(cls, facts: list[HistoryFact], ignore_names: frozenset[str] | set[str] = frozenset()) -> "FactIndex":
        """Index ``facts``; ``ignore_names`` are word stems (people's names) dropped
        from documents and queries alike."""
        ignored = frozenset(ignore_names)
        doc_terms: list[Counter[str]] = []
        for fact in facts:
            terms: list[str] = []
            for text in (fact.question, *fact.paraphrases, *fact.keywords, fact.id.replace("_", " ")):
                for unit in _without_names(analyse(text), ignored):
                    terms.extend(sorted(unit[1]))
            terms += category_terms(fact.category)
            doc_terms.append(Counter(terms))
        n = len(facts)
        df: Counter[str] = Counter()
        for counts in doc_terms:
            df.update(counts.keys())
        idf = {t: _idf(n, d) for t, d in df.items()}
        lengths = [sum(c.values()) for c in doc_terms]
        return cls(
            facts=list(facts),
            doc_terms=doc_terms,
            doc_len=lengths,
            avg_len=(sum(lengths) / n) if n else 1.0,
            idf=idf,
            unknown_idf=_idf(n, 0),
            by_id={f.id: f for f in facts},
            ignored=ignored,
        )

    # -- scoring ------------------------------------------------------------

    def unit_weight(self, unit: Unit) -> float:
        """A unit weighs as much as its rarest known term.

        Unknown clinical concepts ("rash" in a chest-pain case) weigh the most,
        which is what lets an uncovered question fall below the threshold;
        unknown plain words weigh little, being usually filler.
        """
        known = [self.idf[t] for t in unit[1] if t in self.idf]
        if known:
            return max(known)
        has_concept = any(t.startswith("@") for t in unit[1])
        return self.unknown_idf * (CONCEPT_SHARE if has_concept else FILLER_SHARE)

    def score_fact(self, i: int, units: tuple[Unit, ...] | list[Unit]) -> tuple[float, frozenset[str]]:
        counts = self.doc_terms[i]
        norm = K1 * (1 - B + B * self.doc_len[i] / self.avg_len)
        total = 0.0
        matched: set[str] = set()
        for key, terms in units:
            best = 0.0
            for t in terms:
                tf = counts.get(t, 0)
                if tf:
                    best = max(best, self.idf[t] * tf * (K1 + 1) / (tf + norm))
            if best > 0:
                total += best
                matched.add(key)
        return total, frozenset(matched)

    def rank(self, units: tuple[Unit, ...] | list[Unit]) -> list[Match]:
        if not units:
            return []
        weights = {key: self.unit_weight((key, terms)) for key, terms in units}
        total_w = sum(weights.values()) or 1.0
        out: list[Match] = []
        query_terms = {t for _k, terms in units for t in terms}
        for i, fact in enumerate(self.facts):
            gate = GATED_CATEGORIES.get(fact.category)
            if gate and not gate & query_terms:
                continue
            score, matched = self.score_fact(i, units)
            if score <= 0:
                continue
            cov = sum(weights[k] for k in matched) / total_w
            out.append(Match(fact.id, score, cov, matched))
        out.sort(key=lambda m: (-m.score, -m.coverage))
        return out

    def _resolve_other(self, units: tuple[Unit, ...]) -> tuple[Unit, ...]:
        """"Any other moles?": when a fact speaks of the other moles, the unit
        matches only that fact's marked term; otherwise "other" is ignored."""
        out: list[Unit] = []
        for key, terms in units:
            marked = {t for t in terms if t.startswith("other_")}
            if marked & self.idf.keys():
                terms = frozenset(marked & self.idf.keys())
            elif marked:
                terms = terms - marked
            out.append((key, terms))
        return tuple(out)

    def retrieve(self, text: str) -> list[Match]:
        """Facts that answer ``text`` (one clause), best first; empty if none is good enough."""
        units = self._resolve_other(_without_names(analyse(text), self.ignored))
        ranked = self.rank(units)
        if not ranked:
            return []
        best = ranked[0]
        if best.coverage < MIN_COVERAGE or best.score < MIN_SCORE:
            return []
        weights = {key: self.unit_weight((key, terms)) for key, terms in units}
        total_w = sum(weights.values()) or 1.0
        unit_terms = dict(units)
        chosen = [best]
        covered = set(best.matched_units)
        while len(chosen) < MAX_FACTS_PER_CLAUSE:
            rest = [u for u in units if u[0] not in covered]
            if not rest:
                break
            candidates = [m for m in self.rank(rest) if m.fact_id not in {c.fact_id for c in chosen}]
            if not candidates:
                break
            nxt = candidates[0]
            gain = sum(weights[k] for k in nxt.matched_units) / total_w
            if gain < EXTRA_MIN_COVERAGE or nxt.score < max(MIN_SCORE, EXTRA_MIN_SCORE_RATIO * best.score):
                break
            # A second question needs its own clinical concept: plain words
            # ("regular", "moment") and qualifiers ("family ... diabetes") are
            # part of the first question.
            if not any(_is_intent(unit_terms[k]) for k in nxt.matched_units):
                break
            chosen.append(Match(nxt.fact_id, nxt.score, gain, nxt.matched_units))
            covered |= nxt.matched_units
        # Answer in the order the doctor asked ("smoke or drink" -> smoking first).
        position = {key: i for i, (key, _terms) in enumerate(units)}
        chosen.sort(key=lambda m: min((position[k] for k in m.matched_units), default=0))
        return chosen


def _without_names(units: tuple[Unit, ...], names: frozenset[str]) -> tuple[Unit, ...]:
    """Drop people's names ("Has Leo had...", "Mr Ortiz, do you..."): a name is
    not a topic, and as an unknown word it would dilute the question's coverage.
    A name that is also a clinical word (it carries a concept) is kept."""
    if not names:
        return units
    return tuple(u for u in units if u[0] not in names or any(t.startswith("@") for t in u[1]))


def case_names(case: Case) -> frozenset[str]:
    """Stems of the patient's and the proxy speaker's names (parenthesised
    relation dropped: "Janet Pembroke (daughter)")."""
    raw = [case.doorway.patient_name, re.sub(r"\([^)]*\)", " ", case.persona.speaker_name or "")]
    words = {w for text in raw for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 1}
    return frozenset(stem(w) for w in words)


def _is_intent(terms: frozenset[str]) -> bool:
    concepts = {t[1:] for t in terms if t.startswith("@")}
    return any(c not in QUALIFIER_CONCEPTS and not c.startswith("anat_") for c in concepts)


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


_CACHE: OrderedDict[tuple[str, str], FactIndex] = OrderedDict()
_CACHE_SIZE = 64


_KEY_BY_OBJECT: OrderedDict[int, tuple[Case, tuple[str, str]]] = OrderedDict()


def _case_key(case: Case) -> tuple[str, str]:
    """(id, content hash), remembered per case object: hashing a big case costs
    more than answering a question, and a loaded case is not edited mid-encounter."""
    entry = _KEY_BY_OBJECT.get(id(case))
    if entry is not None and entry[0] is case:
        return entry[1]
    key = (case.id, case.content_hash())
    _KEY_BY_OBJECT[id(case)] = (case, key)
    if len(_KEY_BY_OBJECT) > _CACHE_SIZE:
        _KEY_BY_OBJECT.popitem(last=False)
    return key


def index_for(case: Case) -> FactIndex:
    """The case's fact index, built on first use and cached by (id, content hash)."""
    key = _case_key(case)
    idx = _CACHE.get(key)
    if idx is None:
        idx = FactIndex.build(case.history, case_names(case))
        _CACHE[key] = idx
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return idx
