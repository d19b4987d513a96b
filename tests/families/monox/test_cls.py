from pathlib import Path

import pytest

from xlt.core.errors import XltError
from xlt.data.cls import cls_path, load_cls, parse_review_file, rating_to_label


def item(rating, text, summary="Headline", title="Some Product", category="Books"):
    return (
        f"<item><category>{category}</category><rating>{rating}</rating><asin>B000TEST</asin>"
        f"<url>http://www.amazon.de/dp/B000TEST</url><text>{text}</text><title>{title}</title>"
        f"<summary>{summary}</summary></item>"
    )


def write_review(root: Path, lang: str, domain: str, split: str, items: list[str]) -> Path:
    path = root / lang / domain / f"{split}.review"
    path.parent.mkdir(parents=True, exist_ok=True)
    # Published layout: a header line, then items separated by blank lines.
    path.write_text("<items>\n" + "\n\n".join(items) + "\n</items>\n", encoding="utf-8")
    return path


def test_train_labels_follow_rating_convention(tmp_path):
    write_review(
        tmp_path,
        "de",
        "books",
        "train",
        [
            item("5.0", "Ein wunderbares Buch &amp; spannend."),
            item("1.0", "Langweilig.\nNicht kaufen!", summary="Schade"),
            item("4.0", "Gut."),
            item("2.0", "Eher schlecht &lt;3 &quot;Fazit&quot;"),
        ],
    )
    records = load_cls(tmp_path, "de", "books", "train")
    assert records == [
        {"text": "Ein wunderbares Buch & spannend.", "label": 1},
        {"text": "Langweilig.\nNicht kaufen!", "label": 0},
        {"text": "Gut.", "label": 1},
        {"text": 'Eher schlecht <3 "Fazit"', "label": 0},
    ]
    with_summary = load_cls(tmp_path, "de", "books", "train", text_fields=("summary", "text"))
    assert with_summary[1]["text"] == "Schade\nLangweilig.\nNicht kaufen!"


def test_unlabeled_has_no_labels_and_aliases(tmp_path):
    write_review(tmp_path, "jp", "music", "unlabeled", [item("3.0", "普通のアルバム。"), item("5.0", "最高！")])
    records = load_cls(tmp_path, "ja", "music", "unlabelled")
    assert records == [{"text": "普通のアルバム。"}, {"text": "最高！"}]


def test_three_stars_in_labelled_file_is_an_error(tmp_path):
    write_review(tmp_path, "en", "dvd", "test", [item("4.0", "fine"), item("3.0", "meh")])
    with pytest.raises(XltError, match=r"item 1 has rating '3.0'"):
        load_cls(tmp_path, "en", "dvd", "test")


def test_missing_file_names_path_and_layout(tmp_path):
    with pytest.raises(XltError) as err:
        load_cls(tmp_path, "fr", "dvd", "test")
    message = str(err.value)
    assert str(tmp_path / "fr" / "dvd" / "test.review") in message
    assert "{root}/{lang}/{domain}/{split}.review" in message
    with pytest.raises(XltError, match="no language 'es'"):
        cls_path(tmp_path, "es", "dvd", "test")
    with pytest.raises(XltError, match="no domain 'kitchen'"):
        cls_path(tmp_path, "en", "kitchen", "test")


def test_missing_field_and_empty_file(tmp_path):
    path = write_review(tmp_path, "en", "books", "train", ["<item><text>no rating</text></item>"])
    with pytest.raises(XltError, match=r"item 0 has no field\(s\) \['rating'\]"):
        load_cls(tmp_path, "en", "books", "train")
    path.write_text("nothing here", encoding="utf-8")
    with pytest.raises(XltError, match="no <item>"):
        load_cls(tmp_path, "en", "books", "train")


def test_parse_review_file_keeps_all_fields_and_tolerates_raw_markup(tmp_path):
    path = write_review(
        tmp_path,
        "en",
        "books",
        "train",
        [item("5.0", "Great <b>bold</b> read & more"), "<item><rating>2.0</rating><summary/><text>short</text></item>"],
    )
    first, second = parse_review_file(path)
    assert first["text"] == "Great <b>bold</b> read & more"
    assert first["summary"] == "Headline" and first["category"] == "Books" and first["asin"] == "B000TEST"
    assert second == {"rating": "2.0", "summary": "", "text": "short"}


def test_rating_to_label():
    assert [rating_to_label(r) for r in (1.0, 2.0, 2.9, 3.1, 4.0, 5.0)] == [0, 0, 0, 1, 1, 1]
    with pytest.raises(ValueError):
        rating_to_label(3.0)
