"""The per-layer cosine gap of translations: by hand on tiny vectors, its intervals, its table rows and figure."""

import numpy as np
import pandas as pd
import pytest

from xlt import cli
from xlt.analysis.bootstrap import resample_counts, resampled_metric
from xlt.analysis.compare import paired_tests, read_runs
from xlt.analysis.intervals import record_interval
from xlt.core.errors import XltError
from xlt.core.metrics import MetricsFile, examples_path, read_examples
from xlt.evaluate.alignment import EncodedBitext, alignment_records
from xlt.evaluate.cosine_gap import cosine_gap, cosine_gap_records, derangement, pair_cosines
from xlt.families.alignment.plots import cosine_gap_by_layer
from xlt.report.aggregate import aggregate

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------ the definition


def test_derangement_is_a_seeded_permutation_without_fixed_points():
    for n in (2, 3, 10, 101):
        for seed in (0, 1, 7):
            pi = derangement(n, seed)
            assert sorted(pi) == list(range(n)) and not np.any(pi == np.arange(n))
            np.testing.assert_array_equal(pi, derangement(n, seed))  # deterministic
    assert derangement(2, 5).tolist() == [1, 0]  # the only derangement of two
    assert any(not np.array_equal(derangement(50, 0), derangement(50, s)) for s in (1, 2, 3))
    with pytest.raises(ValueError, match="at least 2"):
        derangement(1)


def test_identical_translations_give_one_minus_the_mean_random_cosine():
    e = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    partner = np.array([1, 2, 0])
    # random pairs: cos(e0, e1) = 0, cos(e1, e2) = cos(e2, e0) = 1/sqrt(2)
    assert cosine_gap(e, e, partner) == pytest.approx(1 - (2 / np.sqrt(2)) / 3)
    translation, random = pair_cosines(3 * e, e, partner)  # the cosine ignores length
    np.testing.assert_allclose(translation, [1, 1, 1])
    np.testing.assert_allclose(random, [0, 1 / np.sqrt(2), 1 / np.sqrt(2)])


def test_orthogonal_translations_give_a_negative_gap():
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    e = np.array([[0.0, 2.0], [5.0, 0.0]])  # each translation orthogonal, each random partner parallel
    assert cosine_gap(x, e, derangement(2)) == pytest.approx(-1.0)
    # three orthogonal translations: -1 when every random partner is parallel, 0 when orthogonal too
    x, e = np.eye(3), np.roll(np.eye(3), 1, axis=0)  # e_i is x_(i-1)
    assert cosine_gap(x, e, np.array([1, 2, 0])) == pytest.approx(-1.0)
    assert cosine_gap(x, e, np.array([2, 0, 1])) == pytest.approx(0.0)


def _planted(n=30, dim=8, seed=0):
    """Layer 0: unrelated sides; layer 1: the same meaning plus a large offset per language;
    layer 2: identical sides."""
    rng = np.random.default_rng(seed)
    meaning = rng.normal(size=(n, dim))
    offset_xx, offset_en = 6 * rng.normal(size=dim), 6 * rng.normal(size=dim)
    texts = {0: rng.normal(size=(n, dim)), 1: meaning + offset_xx, 2: meaning}
    english = {0: rng.normal(size=(n, dim)), 1: meaning + offset_en, 2: meaning.copy()}
    return EncodedBitext("deu", texts, english)


def test_records_per_layer_raw_and_centred_match_the_definition():
    bitext = _planted()
    partner = derangement(30, 0)
    raw = {r["layer"]: r for r in cosine_gap_records([bitext])}
    centred = {r["layer"]: r for r in cosine_gap_records([bitext], center_languages=True)}
    assert {r["metric"] for r in raw.values()} == {"cosine_gap"}
    assert {r["metric"] for r in centred.values()} == {"cosine_gap_centered"}
    assert all(set(r) == {"metric", "value", "lang", "layer"} for r in raw.values())  # no direction: it has none
    for layer in range(3):
        src, eng = bitext.texts[layer], bitext.english[layer]
        by_hand = np.mean(
            [
                src[i] @ eng[i] / np.linalg.norm(src[i]) / np.linalg.norm(eng[i])
                - src[i] @ eng[partner[i]] / np.linalg.norm(src[i]) / np.linalg.norm(eng[partner[i]])
                for i in range(30)
            ]
        )
        assert raw[layer]["value"] == pytest.approx(by_hand)
        cs, ce = src - src.mean(0), eng - eng.mean(0)  # the retrieval's centring
        assert centred[layer]["value"] == pytest.approx(cosine_gap(cs, ce, partner))
    assert abs(raw[0]["value"]) < 0.3 and raw[2]["value"] > 0.7
    # the language offsets hide the shared meaning; centring brings it back
    assert raw[1]["value"] < 0.2 < 0.7 < centred[1]["value"]
    # another seed draws other random pairs
    assert cosine_gap_records([bitext], seed=3)[0]["value"] != raw[0]["value"]


def test_examples_are_interval_only_sets_of_per_pair_cosines():
    sets = []
    records = cosine_gap_records(
        [_planted(), EncodedBitext("one", {0: np.ones((1, 8))}, {0: np.ones((1, 8))})], examples_out=sets
    )
    assert [r["lang"] for r in records] == ["deu"] * 3  # a single pair has no random partner: no record
    assert len(sets) == 3
    for one, rec in zip(sets, records):
        assert one["kind"] == "cosine_gap" and one["metric"] == "cosine_gap" and one["interval_only"] is True
        assert (one["lang"], one["layer"]) == (rec["lang"], rec["layer"])
        assert len(one["translation_cosine"]) == len(one["random_cosine"]) == 30
        assert np.mean(np.subtract(one["translation_cosine"], one["random_cosine"])) == pytest.approx(rec["value"])


# ------------------------------------------------------------------ intervals and the table


def test_gap_intervals_resample_pairs_and_read_only_their_own_sets():
    sets = []
    bitext = _planted()
    records = cosine_gap_records([bitext], examples_out=sets) + cosine_gap_records([bitext], True, examples_out=sets)
    for rec in records:
        low, high = record_interval(rec, sets, resamples=500)
        assert low <= rec["value"] <= high
        (own,) = [s for s in sets if s["metric"] == rec["metric"] and s["layer"] == rec["layer"]]
        draws = resampled_metric(
            "mean_difference", own["translation_cosine"], own["random_cosine"], resample_counts(30, 500, 0)
        )
        assert (low, high) == pytest.approx(tuple(np.percentile(draws, [2.5, 97.5])))
    # a raw record never reads a centred set
    raw0 = records[0]
    assert record_interval(raw0, [s for s in sets if s["metric"] == "cosine_gap_centered"]) is None


def _align_run(tmp_path, name, with_gap=True):
    metrics = MetricsFile("alignment", name, axes={"source": "pretrained", "model": name}, manifest=False)
    encoded = [
        _planted(seed=1),
        EncodedBitext(
            "fra",
            *[{k: v[::-1] for k, v in side.items()} for side in (_planted(seed=2).texts, _planted(seed=2).english)],
        ),
    ]
    metrics.extend(alignment_records(encoded, examples_out=metrics.examples))
    metrics.extend(alignment_records(encoded, center_languages=True, examples_out=metrics.examples))
    if with_gap:
        metrics.extend(cosine_gap_records(encoded, examples_out=metrics.examples))
        metrics.extend(cosine_gap_records(encoded, center_languages=True, examples_out=metrics.examples))
    path = tmp_path / name / "alignment.json"
    metrics.write(path)
    return path


def test_table_gets_gap_rows_with_intervals_and_the_retrieval_rows_do_not_move(tmp_path):
    paths = [_align_run(tmp_path, "pretrained-a"), _align_run(tmp_path, "pretrained-b")]
    before = [_align_run(tmp_path / "old", "pretrained-a", False), _align_run(tmp_path / "old", "pretrained-b", False)]
    table, old = aggregate(paths, resamples=200), aggregate(before, resamples=200)
    gap = table[table.metric.str.startswith("cosine_gap")]
    assert len(gap) == 2 * 2 * 3 * 2  # runs x languages x layers x (raw, centred)
    assert gap.direction.isna().all() and gap.ci_low.notna().all()
    assert ((gap.ci_low <= gap.value) & (gap.value <= gap.ci_high)).all()
    retrieval = table[table.metric.str.startswith("bitext_retrieval_acc")].reset_index(drop=True)
    pd.testing.assert_frame_equal(retrieval, old.reset_index(drop=True))
    # the gap sets are interval-only: the paired tests see exactly the retrieval sets they saw before
    assert [sorted(r.sets) for r in read_runs(paths)] == [sorted(r.sets) for r in read_runs(before)]
    pd.testing.assert_frame_equal(
        paired_tests(read_runs(paths), "alignment", resamples=50),
        paired_tests(read_runs(before), "alignment", resamples=50),
    )
    assert {one["kind"] for one in read_examples(examples_path(paths[0]))} == {"retrieval", "cosine_gap"}


# ------------------------------------------------------------------ the figure


def _gap_table():
    rows = []
    for run in ("pretrained-m", "dual-m"):
        for metric in ("cosine_gap", "cosine_gap_centered"):
            for lang, shift in (("qaa", 0.0), ("qab", 0.1)):
                for layer in range(4):
                    value = 0.1 * layer + shift + (0.3 if metric.endswith("_centered") else 0.0)
                    rows.append(
                        {
                            "run_id": run,
                            "metric": metric,
                            "lang": lang,
                            "layer": layer,
                            "direction": np.nan,
                            "value": value,
                            "ci_low": value - 0.02,
                            "ci_high": value + 0.03,
                        }
                    )
    rows.append(
        {
            "run_id": "pretrained-m",
            "metric": "bitext_retrieval_acc",
            "lang": "qaa",
            "layer": 0,
            "direction": "xx->en",
            "value": 9.0,
            "ci_low": 8.0,
            "ci_high": 10.0,
        }
    )  # not a gap row: ignored
    return pd.DataFrame(rows)


def test_gap_figure_has_a_line_per_language_raw_and_centred_panels_and_bands(tmp_path):
    out = tmp_path / "gap.png"
    fig = cosine_gap_by_layer(_gap_table(), out, "pretrained-m")
    assert out.read_bytes()[:8] == PNG_MAGIC
    raw, centred = fig.axes[:2]
    assert (raw.get_title(), centred.get_title()) == ("raw", "mean-centred per language")
    lines = {line.get_label(): line for line in raw.lines if not line.get_label().startswith("_")}
    assert sorted(lines) == ["qaa", "qab"]
    np.testing.assert_allclose(lines["qab"].get_ydata(), [0.1, 0.2, 0.3, 0.4])
    centred_lines = {line.get_label(): line for line in centred.lines if not line.get_label().startswith("_")}
    np.testing.assert_allclose(centred_lines["qaa"].get_ydata(), [0.3, 0.4, 0.5, 0.6])
    bands = [c for c in raw.collections if c.get_label() == "_interval"]
    assert len(bands) == 2
    extents = sorted(tuple(b.get_paths()[0].get_extents().get_points()[:, 1]) for b in bands)
    np.testing.assert_allclose(extents, [(-0.02, 0.33), (0.08, 0.43)])
    assert fig._suptitle.get_text() == "pretrained-m: cosine gap of translations by layer"


def test_gap_figure_needs_the_runs_gap_rows(tmp_path):
    with pytest.raises(XltError, match="no cosine_gap records of run 'nope'"):
        cosine_gap_by_layer(_gap_table(), tmp_path / "x.png", "nope")


def test_align_gap_plot_verb_writes_the_figure_from_the_aggregated_table(tmp_path):
    table = tmp_path / "alignment.csv"
    aggregate([_align_run(tmp_path, "pretrained-a")], resamples=50).to_csv(table, index=False)
    out = tmp_path / "plots" / "pretrained-a.png"
    assert cli.main(["align-gap-plot", "--table", str(table), "--run-id", "pretrained-a", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert (
        cli.main(["align-gap-plot", "--table", str(table), "--run-id", "other", "--out", str(tmp_path / "o.png")]) == 2
    )
    assert not (tmp_path / "o.png").exists()
