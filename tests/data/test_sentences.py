import hashlib
import json

import pytest

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.data.abbreviations import never_final
from xlt.data.prepare import prepare
from xlt.data.sentences import abbreviation_list, corpus_sentences, draw_splits, split_sentences

ARTICLE = (
    "Amsterdam is de hoofdstad van Nederland. De stad telt ca. 900.000 inwoners, o.a. in de wijk De Pijp.\n"
    "Geschiedenis\n"
    "In 1950 verhuisde hij, d.w.z. hij vertrok naar het buitenland. Hij werd geboren op 3 jan. 1920 in Utrecht."
)


def test_dutch_abbreviations_do_not_end_a_sentence_and_a_line_does():
    assert split_sentences(ARTICLE, "nl") == [
        "Amsterdam is de hoofdstad van Nederland.",
        "De stad telt ca. 900.000 inwoners, o.a. in de wijk De Pijp.",
        "Geschiedenis",
        "In 1950 verhuisde hij, d.w.z. hij vertrok naar het buitenland.",
        "Hij werd geboren op 3 jan. 1920 in Utrecht.",
    ]


# Dutch Wikipedia sentences syntok alone cut in two (its list is English, German and Spanish)
WHOLE_DUTCH = [
    "Ca. 900.000 mensen wonen in de stad.",  # a capitalised abbreviation before a number
    "Hij noemt het op blz. 12 van zijn boek.",  # a page before a two-digit number
    "Het dorp ligt ong. 40 km ten zuiden van Utrecht.",
    "De rede van prof. dr. A. de Vries duurde lang.",  # titles before an initial
    "Dhr. Jansen en mevr. De Vries trouwden in 1950.",  # a title before a name syntok takes for a start
    "Zie art. 12 van de wet en nr. 5 van de reeks.",
    "Hij verhuisde naar bijv. Duitsland of België.",
]
# ... and sentences it joined at a Dutch word its list holds as an English or German abbreviation
SPLIT_DUTCH = [
    ("Het gras is nat. Hij liep weg.", ["Het gras is nat.", "Hij liep weg."]),
    ("Het glas is vol. Hij dronk het op.", ["Het glas is vol.", "Hij dronk het op."]),
    ("Dat mag. Zij ging naar huis.", ["Dat mag.", "Zij ging naar huis."]),
    # "VS" (the United States) in capitals is no "vs." (versus)
    ("Hij werkte in de VS. Dit was in 1990.", ["Hij werkte in de VS.", "Dit was in 1990."]),
    # what ends a clause still ends a sentence
    ("Hij at appels, peren enz. Daarna sliep hij.", ["Hij at appels, peren enz.", "Daarna sliep hij."]),
    (
        "Dit gebeurde in 300 v. Chr. Daarna kwamen de Romeinen.",
        ["Dit gebeurde in 300 v. Chr.", "Daarna kwamen de Romeinen."],
    ),
]


@pytest.mark.parametrize("sentence", WHOLE_DUTCH)
def test_a_dutch_abbreviation_before_a_number_or_a_name_ends_no_sentence(sentence):
    assert split_sentences(sentence, "nl") == [sentence]
    assert split_sentences(f"Dit is de eerste zin. {sentence} Dit is de laatste.", "nl") == [
        "Dit is de eerste zin.",
        sentence,
        "Dit is de laatste.",
    ]


@pytest.mark.parametrize("text, sentences", SPLIT_DUTCH)
def test_a_dutch_word_syntok_lists_as_an_abbreviation_ends_a_sentence(text, sentences):
    assert split_sentences(text, "nl") == sentences


def test_a_language_without_a_list_gets_syntoks_own_and_the_list_is_put_back():
    from syntok._segmentation_states import State

    own = State.abbreviations
    assert split_sentences(ARTICLE, "nl") and State.abbreviations is own
    # syntok's own rules: its list has "nat" ("Nat.") and no "ca" before a number at a start
    assert split_sentences("Het gras is nat. Hij liep weg.", "en") == ["Het gras is nat. Hij liep weg."]
    assert split_sentences("Ca. 900.000 mensen wonen er.", "en") == ["Ca.", "900.000 mensen wonen er."]
    assert abbreviation_list("en") == "none"
    assert abbreviation_list("nl").startswith(f"{len(never_final('nl'))} words, sha256 ")


def test_headings_and_repeats_are_no_sentences():
    sentences = corpus_sentences([ARTICLE, ARTICLE], min_words=3, lang="nl")
    assert len(sentences) == 4 and "Geschiedenis" not in sentences


def test_splits_are_disjoint_seeded_and_sized():
    pool = [f"Zin nummer {i} staat hier." for i in range(50)]
    first = draw_splits(pool, {"train": 30, "dev": 10, "test": 5}, seed=1)
    assert {k: len(v) for k, v in first.items()} == {"train": 30, "dev": 10, "test": 5}
    assert len(set().union(*first.values())) == 45
    assert first == draw_splits(pool, {"train": 30, "dev": 10, "test": 5}, seed=1)
    assert first != draw_splits(pool, {"train": 30, "dev": 10, "test": 5}, seed=2)
    with pytest.raises(XltError, match="hold 50 distinct sentences, the splits need 60.*sentences.pool"):
        draw_splits(pool, {"train": 50, "dev": 10}, seed=1, name="nl-wiki")


def _articles(tmp_path, count):
    lines = [
        json.dumps({"text": f"Artikel {a} begint hier. Het gaat over stad {a}.\nEen derde zin van {a} volgt."})
        for a in range(count)
    ]
    (tmp_path / "nl").mkdir()
    (tmp_path / "nl" / "train.jsonl").write_text("\n".join(lines) + "\n")
    return {
        "source": "local",
        "task": "corpus",
        "files": str(tmp_path / "{lang}" / "{split}.jsonl"),
        "languages": ["nl"],
        "splits": ["train", "dev", "test"],
        "sentences": {"pool": "train", "sizes": {"train": 20, "dev": 5, "test": 5}, "seed": 1, "min_words": 3},
    }


def test_prepare_writes_sentences_with_count_and_sha256(tmp_path):
    info = prepare("nl-wiki", _articles(tmp_path, 12), tmp_path / "out")
    texts = {
        split: [json.loads(line)["text"] for line in (tmp_path / "out" / "nl" / f"{split}.jsonl").open()]
        for split in ("train", "dev", "test")
    }
    assert {split: len(t) for split, t in texts.items()} == {"train": 20, "dev": 5, "test": 5}
    assert all("\n" not in t and t.count(".") == 1 for split in texts.values() for t in split)  # one sentence each
    manifest = info["sentences"]
    assert manifest["segmenter"].startswith("syntok ")
    assert manifest["abbreviations"] == {"nl": abbreviation_list("nl")}
    assert manifest["splits"]["nl/dev"] == {
        "count": 5,
        "sha256": hashlib.sha256("".join(t + "\n" for t in texts["dev"]).encode()).hexdigest(),
    }


def test_sentences_of_a_split_without_a_size_are_refused_at_validation(tmp_path):
    spec = _articles(tmp_path, 2)
    spec["sentences"]["sizes"].pop("test")
    with pytest.raises(XltError, match=r"datasets.nl-wiki.sentences: needs task corpus and one size per split"):
        settings.check_sentences("nl-wiki", spec)


def test_paper_config_draws_the_seeds_sentences():
    config = settings.load("config/paper.yaml")
    wiki = config["datasets"][config["adapt"]["target"]["dataset"]]
    assert wiki["sentences"]["sizes"] == {"train": 80000, "dev": 10000, "test": 10000}
    assert "split_names" not in wiki  # every split comes from the one pool of articles
