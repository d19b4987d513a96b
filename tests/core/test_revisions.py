"""A model's `revision` reaches the loaders: a pinned id (`org/name@revision`) loads that
commit from a hub-layout cache offline, and a revision the cache lacks is a clear error."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from xlt.core.model_files import pinned_ref, split_revision
from xlt.core.plan import model_ref

COMMIT_A, COMMIT_B = "a" * 40, "b" * 40
HUB_ID = "xlt-test/tiny-bert"


def test_pinned_ref_round_trip(tmp_path):
    assert pinned_ref(HUB_ID, "v2") == f"{HUB_ID}@v2"
    assert pinned_ref(HUB_ID, None) == HUB_ID
    assert split_revision(f"{HUB_ID}@v2") == (HUB_ID, "v2")
    assert split_revision(HUB_ID) == (HUB_ID, None)
    odd_dir = tmp_path / "models@2024"  # a local directory is never split, '@' or not
    odd_dir.mkdir()
    assert split_revision(str(odd_dir)) == (str(odd_dir), None)


def test_model_ref_pins_hub_models_only():
    config = {
        "models": {
            "m": {"source": "hub", "path": HUB_ID, "revision": "v2"},
            "plain": {"source": "hub", "path": HUB_ID},
            "mine": {"source": "local", "path": "/data/my@model"},
            "demo": {"source": "demo"},
        }
    }
    assert model_ref(config, "m") == f"{HUB_ID}@v2"
    assert model_ref(config, "plain") == HUB_ID
    assert model_ref(config, "mine") == "/data/my@model"
    assert model_ref(config, "demo") == "results/models/demo"


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory, demo_model_dir):
    """<cache>/models--xlt-test--tiny-bert with two commits: main -> A, tag v2 -> B (B's weights
    differ from A's), in the layout huggingface_hub reads offline."""
    import torch
    from transformers import AutoModel

    cache = tmp_path_factory.mktemp("hub")
    repo = cache / f"models--{HUB_ID.replace('/', '--')}"
    snap_a, snap_b = repo / "snapshots" / COMMIT_A, repo / "snapshots" / COMMIT_B
    shutil.copytree(demo_model_dir, snap_a)
    shutil.copytree(demo_model_dir, snap_b)
    model = AutoModel.from_pretrained(snap_b)
    with torch.no_grad():
        model.embeddings.word_embeddings.weight.add_(1.0)
    model.save_pretrained(snap_b)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT_A)
    (repo / "refs" / "v2").write_text(COMMIT_B)
    return cache


LOAD = """
import json, sys
from xlt.core.models import load_encoder, load_tokenizer
from xlt.core.manifest import resolved_commit
from xlt.core.model_files import split_revision
for ref in sys.argv[1:]:
    try:
        model = load_encoder(ref)
        load_tokenizer(ref)
    except Exception as err:
        print(json.dumps({"error": f"{type(err).__name__}: {err}"}))
        continue
    hub_id, revision = split_revision(ref)
    print(json.dumps({"sum": float(model.embeddings.word_embeddings.weight.sum()),
                      "commit": resolved_commit(hub_id, revision)}))
"""


def _load(refs: list[str], cache) -> list[dict]:
    """Load every ref in one offline process (one torch import), pointed at `cache` alone."""
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_HOME", None)
    out = subprocess.run([sys.executable, "-c", LOAD, *refs], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.strip().splitlines()[-len(refs) :]]


@pytest.mark.slow
def test_the_pinned_revision_loads_and_a_wrong_one_fails(hub_cache):
    main, v2, by_commit, wrong = _load(
        [HUB_ID, f"{HUB_ID}@v2", f"{HUB_ID}@{COMMIT_B}", f"{HUB_ID}@no-such-tag"], hub_cache
    )
    assert main["commit"] == COMMIT_A and v2["commit"] == COMMIT_B == by_commit["commit"]
    # B's word embeddings are A's plus 1 everywhere
    vocab_times_hidden = v2["sum"] - main["sum"]
    assert vocab_times_hidden > 100 and v2["sum"] == pytest.approx(by_commit["sum"])
    assert "error" in wrong and "no-such-tag" in wrong["error"] and "models.<name>.revision" in wrong["error"]
