"""Abbreviations that never end a sentence, per language: for a language listed here the segmenter
(xlt.data.sentences) gives syntok this list in place of its own, and joins a sentence that still
ends in one of them to the next.

syntok's own list is English, German and Spanish. In Dutch it misses "ca.", "blz.", "ong." and the
titles before a name ("Ca. | 900.000 inwoners", "op blz. | 12 van zijn boek", "Prof. dr. | A. de
Vries"), and it holds Dutch words ("nat", "vol", "dom", "mag", "zit", "en", "de"), so "Het gras is
nat. Hij liep weg." stayed one sentence. Each entry here takes a word after it (a number, a name,
a noun): a title, a page or number reference, an adverb of quantity or a connective. Left out, so
syntok's other rules decide: those that end a clause ("enz.", "etc.", "e.a.", "e.d.", "jr.", "sr.",
"a.s."), months (syntok's own rule keeps "3 jan. 1920"), "Chr." ("300 v. Chr. Daarna ..."), single
letters (initials end names: syntok's rule) and abbreviations that are also words or names ("vol",
"gen", "bijl", "burg", "tel", "max"). Matched as listed or capitalised ("Ca." opens a sentence),
not in capitals ("VS", the United States, is no "vs."). The list is ours (no segmenter on PyPI
ships one for Dutch that syntok could read); tests/data/test_sentences.py holds its cases.
"""

from __future__ import annotations

# written without their final full stop, as syntok gives the token before it ("o.a" of "o.a.")
NEVER_FINAL = {
    "nl": frozenset(
        """
        dr drs prof mr ir ing dhr mevr mej mgr ds st
        ca ong
        blz bl nr nrs art artt fig afb hfst par pag dl jrg vgl cf
        bijv bv zgn resp vnl evt incl excl vs
        o.a d.w.z m.a.w m.b.t t.a.v i.p.v t.o.v i.v.m n.a.v i.s.m o.l.v m.i.v a.d
        """.split()
    )
}


def never_final(lang: str) -> frozenset[str]:
    """The abbreviations (lower case, without their final full stop) that end no sentence in
    `lang`; none for a language without a list (syntok's own rules alone)."""
    return NEVER_FINAL.get(lang, frozenset())
