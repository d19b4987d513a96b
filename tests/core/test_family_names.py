"""A family is its folder: no module outside `src/xlt/families/<name>/` names a family or one of its
rules (issue 38). Every .py, .smk and .yaml file under src/xlt and workflow/ (and the Snakefile) is
read for each registered family's name and rule names, word-bounded, in its code: identifiers and
string literals of Python and Snakemake files, keys and values of YAML files. Comments, docstrings
and YAML `description:` texts are prose, not coupling, and are not read. A family's own folder may
name itself and the families its plan READS (the cross-family reads it declares); nothing else is
allowed.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import yaml

from xlt.core import registry

REPO = Path(__file__).resolve().parents[2]
FAMILIES = REPO / "src" / "xlt" / "families"
# the aggregate, plot, training-curves and checkpoint-choices rules the workflow makes for a family (report.smk)
GENERIC_RULES = ("aggregate_{}", "plot_{}", "plot_curves_{}", "aggregate_{}_checkpoints")
# Names of a family or a rule that are also words of the vocabulary every family shares, defined
# outside all of them: as the bare word they mean that, so only the forms that point at the family
# count (a config path `name.key`, a results path `.../name/`, `families.name`).
HOMONYMS = {
    "freeze_depth": "the frozen-layer axis and --freeze-depth flag (xlt.core.freezing) that several families sweep",
    "prefix_states": "the frozen-prefix store's config section (core schema.yaml's $defs, xlt.frozen_prefix)",
    "alignment": "xlt.evaluate.alignment, the per-layer retrieval evaluator, and the English word",
    "finetune": "fine-tuning: a MonoX mode, the verb `xlt finetune`, the paired tests' baseline",
    "distill": "knowledge distillation: MonoX students, a dual objective",
    "mine": "the English word",
}


def family_names(name: str) -> set[str]:
    """The family's name and the names of its rules (its rules.smk, its LEDGER, the generic ones)."""
    rules = set(re.findall(r"^rule (\w+):", Path(registry.rules_file(name)).read_text(), re.M))
    return {name, *rules, *registry.plan(name).LEDGER, *(rule.format(name) for rule in GENERIC_RULES)}


def prose_lines(text: str) -> set[int]:
    """The lines where a string statement starts (docstrings, attribute docstrings): prose. In a
    Snakemake file, only those after a `def` or `class` line (a rule's `shell:` string is code)."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type != tokenize.NL]
    lines = set()
    for before, token, after in zip([None, *tokens], tokens, [*tokens[1:], None]):
        statement = before is None or before.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        if token.type == tokenize.STRING and statement and after is not None and after.type == tokenize.NEWLINE:
            lines.add(token.start[0])
    return lines


def code_words(path: Path) -> list[str]:
    """Identifiers and string literals of a Python or Snakemake file (comments and prose left out)."""
    text = path.read_text()
    if path.suffix == ".smk":  # a rule's directive string is code; a function's docstring is prose
        text = re.sub(r'(def [^\n]*:\n\s*)"""[\s\S]*?"""', r"\1None", text)
        prose = set()
    else:
        prose = prose_lines(text)
    return [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.NAME or (token.type == tokenize.STRING and token.start[0] not in prose)
    ]


def yaml_words(node, key: str | None = None) -> list[str]:
    """Keys and values of a YAML document, `description:` texts left out."""
    if isinstance(node, dict):
        return [w for k, v in node.items() for w in [str(k), *yaml_words(v, str(k))]]
    if isinstance(node, list):
        return [w for item in node for w in yaml_words(item, key)]
    return [] if key == "description" or node is None else [str(node)]


def words(path: Path) -> list[str]:
    if path.suffix == ".yaml":
        return [w for doc in yaml.safe_load_all(path.read_text()) for w in yaml_words(doc)]
    return code_words(path)


def scanned_files() -> list[Path]:
    files = [REPO / "Snakefile"]
    for root in (REPO / "src" / "xlt", REPO / "workflow"):
        files += [p for p in sorted(root.rglob("*")) if p.suffix in (".py", ".smk", ".yaml") and p.is_file()]
    return files


def pattern(name: str, is_family: bool) -> re.Pattern | None:
    """How `name` is found in a word. A family's name: as whole parts of identifiers and strings, any
    case (DUAL_OBJECTIVES, "results/tables/sbert_summary.csv"); a rule's: as itself (train_dual). A
    homonym family name only in a form that points at the family; a homonym rule name (a word of the
    shared vocabulary with no such form) is not looked for."""
    if name in HOMONYMS:
        if not is_family:
            return None
        return re.compile(rf"(?:families[./]|/){name}(?=[/._-])|(?<![\w.]){name}\.(?=[a-z_])")
    if is_family:
        return re.compile(rf"(?<![a-z0-9]){name}(?![a-z0-9])", re.IGNORECASE)
    return re.compile(rf"(?<![\w-]){name}(?![\w-])")


def findings() -> set[tuple[str, str]]:
    """(file, name) for every family or rule name a file names outside the folders allowed to."""
    patterns = {
        family: [(name, pattern(name, name == family)) for name in sorted(family_names(family))]
        for family in registry.names()
    }
    found = set()
    for path in scanned_files():
        relative = path.relative_to(REPO)
        owner = path.relative_to(FAMILIES).parts[0] if path.is_relative_to(FAMILIES) else None
        allowed = {owner, *registry.plan(owner).READS} if owner in patterns else set()
        text = "\n".join(words(path))
        for family, named in patterns.items():
            if family not in allowed:
                found |= {(str(relative), name) for name, regex in named if regex and regex.search(text)}
    return found


def test_no_module_outside_a_family_folder_names_a_family_or_its_rules():
    assert findings() == set(), "name the family through xlt.core.registry, or move the code into its folder"


def test_the_scan_finds_a_family_name_in_code_and_leaves_prose_alone(tmp_path):
    """The reader itself: a string and an identifier are found, a comment and a docstring are not."""
    module = tmp_path / "module.py"
    module.write_text(
        '"""About sbert."""\n# sbert\nX = "results/sbert.csv"\nsbert = 1\n"""sbert"""\n\ndef f():\n    """sbert"""\n'
    )
    assert [w for w in code_words(module) if "sbert" in w] == ['"results/sbert.csv"', "sbert"]
    family, rule, homonym = pattern("dual", True), pattern("train_dual", False), pattern("freeze_depth", True)
    assert family.search("DUAL_OBJECTIVES") and family.search("dual-prefix-states") and not family.search("dualism")
    assert rule.search("train_dual") and not rule.search("train_dual_x") and not rule.search("xlt train-dual")
    assert homonym.search("freeze_depth.depths") and homonym.search("tables/freeze_depth.csv")
    assert not homonym.search("freeze_depth") and not homonym.search("--freeze-depth")
    assert pattern("finetune", False) is None  # a rule named with a word every family uses
    schema = tmp_path / "schema.yaml"
    schema.write_text("description: sbert\nproperties:\n  sbert: {default: dual, description: dual}\n")
    assert [w for w in words(schema) if w in ("sbert", "dual")] == ["sbert", "dual"]
    assert "train_sbert" in family_names("sbert") and "aggregate_sbert" in family_names("sbert")
