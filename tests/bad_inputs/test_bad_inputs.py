"""Bad input, one test per case: each stops before any model loads, with one line that names the
file (and the line, where there is one), the problem and the fix, and deletes nothing already computed.

The corpus beside this module is a small local project (paths relative to this folder):
config/base.yaml declares a 2-layer BERT directory (models/tiny-bert: config and vocabulary here,
weights written by the `project` fixture) and local NLI files (data/nli); its other datasets
each point at files with one defect (data/<defect>/), and every other config/*.yaml is base.yaml
with one defect. prepared/ holds normalised JSONL as `xlt prepare-data` writes it, for the
training verbs. The control tests show that without the defect the same commands get past
every check (and do load the model), so each bad case fails for its defect alone.

"No model loads" is enforced, not assumed: transformers' `from_pretrained` of every model and
tokenizer class raises in these tests, and the command must still end with its one-line error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from xlt.cli import main

CORPUS = Path(__file__).resolve().parent


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the corpus as the working directory, its models completed with weights, and a
    results/ folder holding what earlier jobs computed."""
    from transformers import BertConfig, BertModel

    root = tmp_path / "project"
    shutil.copytree(CORPUS, root, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    config = BertConfig.from_json_file(root / "models" / "tiny-bert" / "config.json")
    BertModel(config).save_pretrained(tmp_path / "weights")
    for name in ("tiny-bert", "no-tokenizer"):
        shutil.copy(tmp_path / "weights" / "model.safetensors", root / "models" / name)
    computed = {
        "results/data/nli/en/train.jsonl": '{"text": "earlier", "label": 0}\n',
        "results/data/nli/info.json": "{}\n",
        "results/runs/r1/train.json": '{"meta": {}, "metrics": []}\n',
        "results/runs/r1/model/config.json": "{}\n",
    }
    for name, text in computed.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.chdir(root)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "results").rglob("*")) if p.is_file()}


@pytest.fixture
def no_model_loads(monkeypatch):
    """Any model or tokenizer load fails the test (AssertionError is not an error the CLI catches)."""
    import transformers

    def refuse(cls, *args, **kwargs):
        raise AssertionError(f"{cls.__name__}.from_pretrained({args[0] if args else ''!s}) ran before the error")

    monkeypatch.setattr(transformers.PreTrainedModel, "from_pretrained", classmethod(refuse))
    monkeypatch.setattr(transformers.PreTrainedTokenizerBase, "from_pretrained", classmethod(refuse))


def stops(capsys, project: Path, *argv: str) -> str:
    """Run `xlt *argv`; it must fail with exit status 2 and one error line, and leave results/ as
    it was. Returns the error message."""
    before = snapshot(project)
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith(f"xlt {argv[0]}: error: ")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert snapshot(project) == before, "something already computed was changed or deleted"
    return lines[0].removeprefix(f"xlt {argv[0]}: error: ")


def prepare(dataset: str) -> list[str]:
    return ["prepare-data", "--config", "config/base.yaml", "--dataset", dataset, "--out", f"results/data/{dataset}"]


def finetune(train: str = "prepared/train.jsonl", model: str = "models/tiny-bert", depth: int = 1) -> list[str]:
    return [
        "finetune",
        "--model",
        model,
        "--train",
        train,
        "--dev",
        "prepared/dev.jsonl",
        "--num-labels",
        "3",
        "--freeze-depth",
        str(depth),
        "--out",
        "results/runs/r1",
        "--max-steps",
        "2",
        "--batch-size",
        "2",
        "--max-length",
        "16",
        "--device",
        "cpu",
    ]


# ---------------------------------------------------------------- controls: the corpus itself is sound


def test_control_the_base_config_checks_and_its_good_dataset_prepares(project, no_model_loads, capsys):
    assert main(["config", "check", "--config", "config/base.yaml"]) == 0
    assert "config/base.yaml: valid" in capsys.readouterr().out
    assert main(["prepare-data", "--config", "config/base.yaml", "--dataset", "nli", "--out", "results/data/nli"]) == 0
    records = [json.loads(line) for line in (project / "results/data/nli/de/test.jsonl").read_text().splitlines()]
    assert records[1] == {"text": "ein hund rennt", "text_pair": "eine katze schläft", "label": 1}


def test_control_finetune_runs_on_the_good_inputs(project):
    # the command the verb-level cases start from gets past every check and loads (and trains) the model
    assert main(finetune()) == 0
    metrics = json.loads((project / "results/runs/r1/train.json").read_text())
    assert metrics["meta"]["steps"] == 2 and (project / "results/runs/r1/model/model.safetensors").is_file()


# ---------------------------------------------------------------- the cases


def test_truncated_jsonl(project, no_model_loads, capsys):
    message = stops(capsys, project, *prepare("truncated"))
    assert message.startswith("data/truncated/train.en.jsonl line 3 is not JSON")
    assert "truncated?" in message and "rewrite the file" in message
    message = stops(capsys, project, *finetune(train="prepared/truncated.jsonl"))
    assert message.startswith("prepared/truncated.jsonl line 4 is not JSON") and "truncated?" in message


def test_tsv_with_a_missing_column(project, no_model_loads, capsys):
    message = stops(capsys, project, *prepare("missing-column"))
    assert message.startswith("data/missing-column/train.en.tsv line 1 (the header) has no column(s) ['hypothesis']")
    assert "it has ['premise', 'label']" in message and "datasets.missing-column.columns" in message


def test_wrong_label_names(project, no_model_loads, capsys):
    message = stops(capsys, project, *prepare("wrong-labels"))
    assert message.startswith(
        "data/wrong-labels/train.en.tsv line 4 has label 'contradicts', which is not in "
        "datasets.wrong-labels.label_names ['entailment', 'neutral', 'contradiction']"
    )
    assert "correct the label in the file or the names in the config" in message


def test_empty_split(project, no_model_loads, capsys):
    message = stops(capsys, project, *prepare("empty-split"))
    assert message == (
        "dataset empty-split: data/empty-split/train.en.tsv has no rows (an empty train split for en); "
        "fill the file, or drop en from datasets.empty-split.splits"
    )
    message = stops(capsys, project, *finetune(train="prepared/empty.jsonl"))
    assert (
        message.startswith("prepared/empty.jsonl holds no examples (an empty split)") and "xlt prepare-data" in message
    )


def test_language_declared_but_absent(project, no_model_loads, capsys):
    # the dataset declares fr, but there is no fr file
    message = stops(capsys, project, *prepare("language-absent"))
    assert message.startswith("dataset language-absent: file not found for lang=fr split=test: data/nli/test.fr.tsv")
    assert "drop fr from datasets.language-absent.languages" in message
    # the family scores fr, which the dataset does not declare
    message = stops(capsys, project, "config", "check", "--config", "config/language-absent.yaml")
    assert message == (
        "config/language-absent.yaml: freeze_depth.eval: dataset 'nli' has no test split for ['fr']; "
        "it declares test for ['en', 'de'] (datasets.nli.splits)"
    )


def test_model_directory_without_tokenizer_files(project, no_model_loads, capsys):
    problem = "model directory models/no-tokenizer has no tokenizer files (any of tokenizer.json, vocab.txt"
    message = stops(capsys, project, "config", "check", "--config", "config/no-tokenizer.yaml")
    assert message.startswith(f"config/no-tokenizer.yaml: models.tiny-bert: {problem}")
    assert "no weights" not in message and "tokenizer.save_pretrained" in message
    message = stops(capsys, project, *finetune(model="models/no-tokenizer"))
    assert message.startswith(problem)


def test_non_utf8_file(project, no_model_loads, capsys):
    message = stops(capsys, project, *prepare("non-utf8"))
    assert message == (
        "data/non-utf8/train.en.tsv line 3 is not UTF-8 (byte 0xe9 at column 22); "
        "re-encode the file as UTF-8, e.g. iconv -f latin1 -t utf-8"
    )
    message = stops(capsys, project, "config", "check", "--config", "config/non-utf8.yaml")
    assert message.startswith("config/non-utf8.yaml line 1 is not UTF-8 (byte 0xe9")


def test_config_whose_sweep_is_empty(project, no_model_loads, capsys):
    message = stops(capsys, project, "config", "check", "--config", "config/empty-sweep.yaml")
    assert message.startswith(
        "config/empty-sweep.yaml: the sweep is empty: no experiment family is enabled; add a section for one of "
    )
    from xlt.core import settings

    listed = message.split("one of ", 1)[1].split(" (see", 1)[0].split(", ")
    assert listed == list(settings.FAMILIES)  # every registered family, in the registry's order


def test_duplicate_run_ids(project, no_model_loads, capsys):
    for verb in ("config", "sweep"):
        argv = ["config", "check"] if verb == "config" else ["sweep"]
        message = stops(capsys, project, *argv, "--config", "config/duplicate-run-ids.yaml")
        assert message == (
            "config/duplicate-run-ids.yaml: freeze_depth: two runs share run id "
            "'tiny-bert-depthnone-seed1' (they would overwrite each other's outputs): "
            "freeze_depth.seeds lists 1 twice; remove the duplicate"
        )


def test_depth_larger_than_the_models_layer_count(project, no_model_loads, capsys):
    message = stops(capsys, project, "config", "check", "--config", "config/too-deep.yaml")
    assert message == (
        "config/too-deep.yaml: freeze depth 3 in freeze_depth.depths is out of range for model "
        "'tiny-bert' with 2 layers; allowed: -1 (nothing frozen), 0 (embeddings) .. 2"
    )
    message = stops(capsys, project, *finetune(depth=3))
    assert message == (
        "--freeze-depth 3 is out of range for models/tiny-bert with 2 layers (its config.json); "
        "use -1 (nothing frozen), 0 (embeddings) .. 2"
    )


def test_dataset_whose_task_does_not_fit_the_family(project, no_model_loads, capsys):
    message = stops(capsys, project, "config", "check", "--config", "config/sts-for-freeze-depth.yaml")
    assert message == (
        "config/sts-for-freeze-depth.yaml: freeze_depth.train.dataset: dataset 'sts' is a sts "
        "dataset; this needs a nli or sentiment dataset"
    )
    message = stops(capsys, project, *finetune(train="prepared/sts.jsonl"))
    assert message.startswith(
        "prepared/sts.jsonl line 1 has no 'label' (it has score, text, text_pair); "
        "this family trains and scores a classifier and needs an nli or sentiment dataset"
    )


@pytest.mark.parametrize(
    "setting, problem",
    [
        (
            "lr: .nan",
            "training.lr: nan is not a finite number; give a finite value in the key's range, or delete "
            "the key for its default",
        ),
        (
            "lr: .inf",
            "training.lr: inf is not a finite number; give a finite value in the key's range, or delete "
            "the key for its default",
        ),
        ("lr: 1e9", "training.lr: 1000000000.0 is outside (0, 1]; set training.lr within (0, 1]"),
        (
            "adam_epsilon: 1e9",
            "training.adam_epsilon: 1000000000.0 is outside (0, 1]; set training.adam_epsilon within (0, 1]",
        ),
        ("epochs: 1e9", "training.epochs: 1000000000.0 is outside (0, 1000]; set training.epochs within (0, 1000]"),
        (
            "warmup_steps: 4",  # the run is max_steps: 4
            "training.warmup_steps: 4 warm-up steps, the run is 4 steps (training.max_steps); set "
            "training.warmup_steps within [0, 3] (0: warmup_ratio applies)",
        ),
        (
            "max_steps: 4.0e+3",
            "training.max_steps: 4000.0 is a float where a whole number (a count, a step, a seed) "
            "is meant; write an integer without a decimal point or exponent",
        ),
    ],
)
def test_numbers_that_cannot_be_meant(project, no_model_loads, capsys, setting, problem):
    # base.yaml with one number no one means, as YAML spells it
    base = (project / "config/base.yaml").read_text()
    assert "training: {max_steps: 4, " in base
    keys = f"{setting}, " if setting.startswith("max_steps") else f"{setting}, max_steps: 4, "
    (project / "config/number.yaml").write_text(base.replace("training: {max_steps: 4, ", "training: {" + keys))
    message = stops(capsys, project, "config", "check", "--config", "config/number.yaml")
    assert message == f"config/number.yaml: config error at {problem}"


def test_an_item_aligned_dataset_one_item_short(project, no_model_loads, capsys):
    # base.yaml's nli declared a translated set: its German test split is an item short of the English one
    base = (project / "config/base.yaml").read_text()
    assert "    splits: {train: [en], dev: [en], test: all}\n" in base
    (project / "config/aligned.yaml").write_text(
        base.replace(
            "    splits: {train: [en], dev: [en], test: all}\n",
            "    splits: {train: [en], dev: [en], test: all}\n    item_aligned: true\n",
            1,
        )
    )
    message = stops(
        capsys,
        project,
        "prepare-data",
        "--config",
        "config/aligned.yaml",
        "--dataset",
        "nli",
        "--out",
        "results/data/nli",
    )
    assert message == (
        "dataset nli declares item_aligned, but split test has 3 items in de and 4 in en; fix the "
        "files, or set datasets.nli.item_aligned: false (its intervals then resample every language "
        "on its own)"
    )
