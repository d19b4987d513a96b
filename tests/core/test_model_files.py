"""A local model directory is checked for config, weights and tokenizer before anything loads it:
transformers builds an empty tokenizer (special tokens only) from a directory without tokenizer
files, and training then runs on [UNK]s."""

from __future__ import annotations

import pytest

from xlt.core.errors import XltError
from xlt.core.model_files import missing_model_files


def test_any_weights_and_any_tokenizer_layout_count(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    assert len(missing_model_files(tmp_path)) == 2
    (tmp_path / "model.safetensors.index.json").write_text("{}")  # a sharded save
    (tmp_path / "sentencepiece.bpe.model").write_text("")  # XLM-R's vocabulary
    assert missing_model_files(tmp_path) == []
    (tmp_path / "config.json").unlink()
    assert missing_model_files(tmp_path) == ["config.json"]


def test_loading_from_a_directory_without_tokenizer_files_stops_before_transformers(tmp_path, monkeypatch):
    import transformers

    from xlt.core.models import load_classifier, load_tokenizer

    def refuse(*args, **kwargs):
        raise AssertionError("transformers was asked to load")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", refuse)
    monkeypatch.setattr(transformers.AutoModelForSequenceClassification, "from_pretrained", refuse)
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"")
    for load in (load_tokenizer, lambda path: load_classifier(path, 3)):
        with pytest.raises(
            XltError,
            match=rf"model directory {tmp_path} has no tokenizer files \(any of tokenizer.json, "
            r"vocab.txt.*\); copy the missing files",
        ):
            load(str(tmp_path))
