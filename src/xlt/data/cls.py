"""The cross-lingual Amazon sentiment corpus CLS (Prettenhofer & Stein 2010, Webis-CLS-10), as
published in ``cls-acl10-unprocessed``::

    {root}/{lang}/{domain}/{split}.review     lang: en de fr jp   domain: books dvd music
                                              split: train test unlabeled

Each file holds ``<item>`` elements whose children are fields, e.g. ``<category>``, ``<rating>``
(``5.0``), ``<asin>``, ``<url>``, ``<text>`` (the review body), ``<title>`` (the product),
``<summary>`` (the review's headline). The files are read as pseudo-XML (one regular expression
per item and field), so a stray unescaped character does not lose the whole file; entities such
as ``&amp;`` are decoded.

Labels follow the corpus paper: a review rated above 3 stars is positive (1), below 3 negative
(0); 3-star reviews are not part of the binary task and do not occur in the published train/test
files (a labelled file containing one raises XltError rather than silently guessing). ``train``
and ``test`` are balanced, 2000 reviews each per language and domain. ``unlabeled`` reviews are
returned as ``{text}`` only, whatever their rating: they are the unlabelled pool of MonoX.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from xlt.core.errors import XltError

CLS_LANGS = ("en", "de", "fr", "jp")
CLS_DOMAINS = ("books", "dvd", "music")
CLS_SPLITS = ("train", "test", "unlabeled")
LABEL_NAMES = ("negative", "positive")
LAYOUT = (
    "{root}/{lang}/{domain}/{split}.review, lang in en/de/fr/jp, domain in books/dvd/music, "
    "split in train/test/unlabeled (the cls-acl10-unprocessed archive)"
)
_LANG_ALIASES = {"ja": "jp"}  # the paper and ISO say ja, the corpus directory says jp
_SPLIT_ALIASES = {"unlabelled": "unlabeled", "unlabeled": "unlabeled"}

_ITEM = re.compile(r"<item>(.*?)</item>", re.DOTALL)
_FIELD = re.compile(r"<(\w+)>(.*?)</\1>|<(\w+)\s*/>", re.DOTALL)


def cls_path(root: str | Path, lang: str, domain: str, split: str) -> Path:
    """The file of one language, domain and split; validates the three names."""
    lang = _LANG_ALIASES.get(lang, lang)
    split = _SPLIT_ALIASES.get(split, split)
    for value, allowed, what in (
        (lang, CLS_LANGS, "language"),
        (domain, CLS_DOMAINS, "domain"),
        (split, CLS_SPLITS, "split"),
    ):
        if value not in allowed:
            raise XltError(f"CLS has no {what} {value!r}; use one of {', '.join(allowed)}")
    return Path(root) / lang / domain / f"{split}.review"


def rating_to_label(rating: float) -> int:
    """1 (positive) for rating > 3, 0 (negative) for rating < 3; 3 has no label."""
    if rating > 3:
        return 1
    if rating < 3:
        return 0
    raise ValueError("a 3-star review is neither positive nor negative")


def parse_review_file(path: str | Path) -> list[dict[str, str]]:
    """Every ``<item>`` of a .review file as {field: decoded text}."""
    text = Path(path).read_text(encoding="utf-8")
    items = []
    for match in _ITEM.finditer(text):
        fields = {}
        for m in _FIELD.finditer(match.group(1)):
            if m.group(1):
                fields.setdefault(m.group(1), html.unescape(m.group(2)).strip())
            else:
                fields.setdefault(m.group(3), "")
        items.append(fields)
    return items


def load_cls(
    root: str | Path, lang: str, domain: str, split: str, text_fields: tuple[str, ...] = ("text",)
) -> list[dict]:
    """Normalised records of one CLS file: ``{text, label}`` for train/test, ``{text}`` for
    unlabeled. `text_fields` picks the fields that make the text (joined by a newline), e.g.
    ``("summary", "text")`` to prepend the review's headline; the default is the review body."""
    path = cls_path(root, lang, domain, split)
    if not path.is_file():
        raise XltError(f"CLS file {path} not found; expected the layout {LAYOUT} under {root}")
    items = parse_review_file(path)
    if not items:
        raise XltError(f"{path} contains no <item> elements; is it a CLS .review file ({LAYOUT})?")
    labelled = path.stem != "unlabeled"
    records = []
    for i, item in enumerate(items):
        missing = [f for f in text_fields + (("rating",) if labelled else ()) if f not in item]
        if missing:
            raise XltError(f"{path}: item {i} has no field(s) {missing}; it has {sorted(item)}")
        record = {"text": "\n".join(item[f] for f in text_fields if item[f])}
        if labelled:
            try:
                rating = float(item["rating"])
                record["label"] = rating_to_label(rating)
            except ValueError:
                raise XltError(
                    f"{path}: item {i} has rating {item['rating']!r}, which is neither above nor "
                    f"below 3 stars; the labelled CLS files hold only 1-2 and 4-5 star reviews"
                ) from None
        records.append(record)
    return records
