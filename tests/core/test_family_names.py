"""A family is its folder: no module outside `src/xlt/families/<name>/` refers to a family or one of
its rules or verbs (issues 38, 48). Every .py, .smk and .yaml file under src/xlt and workflow/ (and
the Snakefile) is read for the forms in which code refers to a family, whatever word the family is
named with: names are checked as identifiers, not as words.

A family's identifiers are its name, its rules (rules.smk, its LEDGER, the generic ones) and its
verbs (commands.py's VERBS). Code refers to one through:
- a module path: `xlt.families.<name>` in an import, a logger name, a `python -m` line;
- a results or data path: `.../<name>/...`, `.../<name>.csv`, `.../<name>_summary.csv`;
- a config path `<name>.key`, or a YAML key `<name>` (a config section);
- a rule: `rule <rule>:`, `rules.<rule>`; a verb: `xlt <verb>` on a command line;
- the bare string of any of them, e.g. `registry.plan("dual")`, `config["dual"]`, `rule == "train_dual"`,
  `family="dual"`, `("dual", "sbert")`, a dict display keyed by two or more family names.
A bare string is a word, not a reference, where the project declares the same spelling as something
shared: a table column or sweep axis (xlt.core.tables.COLUMN_TYPES: `freeze_depth`), a key or value of
the shared config schema (`prefix_states`), a metric (`perplexity`), or a setting of another family
(MonoX's `finetune` mode, dual's `distill` objective); and where it is one key of a dict display or
the index of an object that is no config (`{"probe": ...}`, `loop["probe"]` in cost/calibration.py).
An identifier (a variable `probe`, a function `distill_loss`) and prose (comments, docstrings, YAML
`description:` texts) are not references. A family's own folder may refer to itself and to the
families its plan READS; nothing else may.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import yaml

from xlt.analysis.bootstrap import METRICS
from xlt.core import registry
from xlt.core.tables import COLUMN_TYPES

REPO = Path(__file__).resolve().parents[2]
FAMILIES = REPO / "src" / "xlt" / "families"
# the aggregate, plot, training-curves and checkpoint-choices rules the workflow makes for a family (report.smk)
GENERIC_RULES = ("aggregate_{}", "plot_{}", "plot_curves_{}", "aggregate_{}_checkpoints")
# objects whose index or .get() names a config section or a family's plan entry: there a bare
# string is a reference even as an index
CONFIG_LIKE = re.compile(r"(?i)(config|cfg|settings|sections?|famil(y|ies)|plans?|ledger)$")


@dataclass(frozen=True)
class Identifiers:
    """What a family is called by: its name, its rules' and its verbs' names."""

    name: str
    rules: frozenset[str]
    verbs: frozenset[str]

    def bare(self) -> set[str]:
        return {self.name, *self.rules, *self.verbs}


@dataclass(frozen=True)
class Code:
    """What a file can refer to a family with: dotted names (imports, `rules.x`), the rules it
    defines, and its strings, each bare (the whole string: a lookup by name) or not."""

    dotted: tuple[str, ...] = ()
    rule_defs: tuple[str, ...] = ()
    strings: tuple[str, ...] = ()
    bare_strings: tuple[str, ...] = ()
    dict_keys: tuple[tuple[str, ...], ...] = ()  # each dict display's bare string keys


def shared_words(family: str) -> set[str]:
    """The spellings the project declares as something shared, for `family`: table columns, the
    shared config schema's keys and values, metrics, and other families' settings (their schema's
    keys and values; a family's name is shared only where core declares it)."""
    core = {
        *COLUMN_TYPES,
        *METRICS,
        *yaml_code(yaml.safe_load((REPO / "src/xlt/core/schema.yaml").read_text())).bare_strings,
    }
    others = {
        word
        for name in registry.names()
        if name != family
        for word in yaml_code(yaml.safe_load((registry.folder(name) / "schema.yaml").read_text())).bare_strings
    }
    return core | (others - set(registry.names()))


def identifiers(name: str) -> Identifiers:
    rules = set(re.findall(r"^rule (\w+):", Path(registry.rules_file(name)).read_text(), re.M))
    rules |= {*registry.plan(name).LEDGER, *(rule.format(name) for rule in GENERIC_RULES)}
    return Identifiers(name, frozenset(rules), frozenset(registry.family(name).verbs))


def prose_lines(tokens: list[tokenize.TokenInfo]) -> set[int]:
    """The lines where a string statement starts (docstrings, attribute docstrings): prose."""
    lines = set()
    for before, token, after in zip([None, *tokens], tokens, [*tokens[1:], None]):
        statement = before is None or before.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        if token.type == tokenize.STRING and statement and after is not None and after.type == tokenize.NEWLINE:
            lines.add(token.start[0])
    return lines


def _strings(tokens: list[tokenize.TokenInfo]) -> list[tuple[int, str]]:
    """(index, text) of every string literal, an f-string's parts joined (Python 3.12 tokenizes them
    in parts); the index is that of its first token."""
    out, start, parts = [], None, []
    for i, token in enumerate(tokens):
        kind = tokenize.tok_name[token.type]
        if kind == "STRING":
            out.append((i, re.sub(r"^[A-Za-z]*(\"\"\"|'''|\"|')|(\"\"\"|'''|\"|')$", "", token.string)))
        elif kind == "FSTRING_START":
            start, parts = i, []
        elif kind == "FSTRING_MIDDLE":
            parts.append(token.string)
        elif kind == "FSTRING_END":
            out.append((start, "{}".join(parts)))
    return out


def _is_bare_reference(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    """Whether the whole string at tokens[i] names what it spells: not a dict display's key, nor
    the index (or .get key) of an object that is no config."""
    after = tokens[i + 1].string if i + 1 < len(tokens) else ""
    before = [t.string for t in tokens[max(0, i - 4) : i]]
    if after == ":" and before and before[-1] in ("{", ","):
        return False  # a dict display's key: read with its display's other keys (Code.dict_keys)
    if before[-1:] == ["["] and len(before) >= 2:
        return bool(CONFIG_LIKE.search(before[-2]))
    if before[-3:-1] == [".", "get"] or before[-2:] == ["get", "("]:
        owner = before[-4] if len(before) >= 4 else ""
        return bool(CONFIG_LIKE.search(owner))
    return True


def read_code(text: str, snakemake: bool) -> Code:
    if snakemake:  # a rule's directive string is code; a function's docstring is prose
        text = re.sub(r'(def [^\n]*:\n\s*)"""[\s\S]*?"""', r"\1None", text)
    tokens = [
        t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in (tokenize.NL, tokenize.COMMENT)
    ]
    prose = set() if snakemake else prose_lines(tokens)
    dotted, name = [], ""
    for before, token in zip([None, *tokens], tokens):
        if token.type == tokenize.NAME and (before is None or before.string != "." or not name):
            if name:
                dotted.append(name)
            name = token.string
        elif token.type == tokenize.NAME:
            name += "." + token.string
        elif token.string != ".":
            if name:
                dotted.append(name)
            name = ""
    rule_defs = [
        b.string
        for a, b, c in zip(tokens, tokens[1:], tokens[2:])
        if snakemake and a.string in ("rule", "checkpoint") and b.type == tokenize.NAME and c.string == ":"
    ]
    strings = [(i, s) for i, s in _strings(tokens) if tokens[i].start[0] not in prose]
    bare = [s for i, s in strings if _is_bare_reference(tokens, i)]
    return Code(tuple(dotted), tuple(rule_defs), tuple(s for _, s in strings), tuple(bare), _dict_keys(tokens))


def _dict_keys(tokens: list[tokenize.TokenInfo]) -> tuple[tuple[str, ...], ...]:
    """The bare string keys of each dict display (`{"a": 1, "b": 2}` -> ("a", "b"))."""
    displays, stack = [], []  # stack: per open bracket, its key list (None: no dict display)
    for i, token in enumerate(tokens):
        if token.string in ("{", "[", "("):
            stack.append([] if token.string == "{" else None)
        elif token.string in ("}", "]", ")") and stack:
            keys = stack.pop()
            if keys:
                displays.append(tuple(keys))
        elif token.type == tokenize.STRING and stack and stack[-1] is not None:
            after = tokens[i + 1].string if i + 1 < len(tokens) else ""
            if after == ":" and tokens[i - 1].string in ("{", ","):
                stack[-1].append(_strings([token])[0][1])
    return tuple(displays)


def yaml_code(node, key: str | None = None) -> Code:
    """A YAML document's keys (bare: a key is a config section or setting) and values (`description:`
    texts left out; a whole value is bare too: a family named in a list)."""
    if isinstance(node, dict):
        parts = [Code(bare_strings=(str(k),)) for k in node] + [yaml_code(v, str(k)) for k, v in node.items()]
    elif isinstance(node, list):
        parts = [yaml_code(item, key) for item in node]
    elif key == "description" or node is None:
        parts = []
    else:
        parts = [Code(strings=(str(node),), bare_strings=(str(node),))]
    return Code(
        strings=tuple(s for p in parts for s in p.strings), bare_strings=tuple(s for p in parts for s in p.bare_strings)
    )


def code_of(path: Path) -> Code:
    if path.suffix == ".yaml":
        docs = [yaml_code(doc) for doc in yaml.safe_load_all(path.read_text())]
        return Code(strings=sum((d.strings for d in docs), ()), bare_strings=sum((d.bare_strings for d in docs), ()))
    return read_code(path.read_text(), path.suffix == ".smk" or path.name == "Snakefile")


def references(
    code: Code, family: Identifiers, words: set[str] = frozenset(), names: set[str] = frozenset()
) -> set[str]:
    """The identifiers of `family` that `code` refers to (the module's docstring says the forms);
    `words`: spellings that are shared words as bare strings (shared_words); `names`: every
    family's name (a dict display keyed by two of them is a per-family table)."""
    name = re.escape(family.name)
    module = re.compile(rf"(?<![\w])families[./]{name}(?![\w])")
    forms = [
        (family.name, module),
        (family.name, re.compile(rf"/{name}(?=/|(?:_\w+)?\.[a-z]+\b)")),  # a directory or a file of the family
        (
            family.name,
            re.compile(rf"(?<![\w./{{-]){name}\.(?=[a-z_]\w*\b)(?!(?:csv|json|png|html|md|yaml|txt|log|tsv|pt|py)\b)"),
        ),  # a config path: dual.key
        *((verb, re.compile(rf"\bxlt\s+{re.escape(verb)}(?![\w-])")) for verb in family.verbs),
    ]
    found = {ident for ident in family.bare() - words if ident in code.bare_strings}
    tables = [keys for keys in code.dict_keys if family.name in keys and family.name not in words]
    found |= {family.name for keys in tables if len((names - words) & {*keys, family.name}) > 1}
    found |= {ident for ident, regex in forms for s in code.strings if regex.search(s)}
    found |= {family.name for d in code.dotted if module.search(d)}
    found |= {rule for rule in family.rules if rule in code.rule_defs or f"rules.{rule}" in code.dotted}
    found |= {rule for rule in family.rules for d in code.dotted if d.startswith(f"rules.{rule}.")}
    return found


def scanned_files() -> list[Path]:
    files = [REPO / "Snakefile"]
    for root in (REPO / "src" / "xlt", REPO / "workflow"):
        files += [p for p in sorted(root.rglob("*")) if p.suffix in (".py", ".smk", ".yaml") and p.is_file()]
    return files


def findings(families: list[Identifiers] | None = None) -> set[tuple[str, str, str]]:
    """(file, family, identifier) for every reference a file makes outside the folders allowed to."""
    families = families if families is not None else [identifiers(name) for name in registry.names()]
    words = {family.name: shared_words(family.name) for family in families}
    names = {*registry.names(), *(family.name for family in families)}
    found = set()
    for path in scanned_files():
        owner = path.relative_to(FAMILIES).parts[0] if path.is_relative_to(FAMILIES) else None
        allowed = {owner, *registry.plan(owner).READS} if owner in registry.names() else set()
        code = code_of(path)
        for family in families:
            if family.name not in allowed:
                refs = references(code, family, words[family.name], names)
                found |= {(str(path.relative_to(REPO)), family.name, ident) for ident in refs}
    return found


def test_no_module_outside_a_family_folder_refers_to_a_family_or_its_rules_and_verbs():
    assert findings() == set(), "name the family through xlt.core.registry, or move the code into its folder"


def test_a_family_may_be_named_with_a_word_the_shared_code_uses():
    """Issue 48: a family named `probe` (a word cost/calibration.py uses for its probe run) or
    `distill` meets no finding in the real tree, as long as nothing refers to it."""
    words = [
        Identifiers("probe", frozenset({"train_probe", "aggregate_probe"}), frozenset({"probe-train"})),
        Identifiers("distill", frozenset({"train_distill", "plot_distill"}), frozenset({"distill-student"})),
        Identifiers("layer", frozenset({"probe_layer"}), frozenset({"layer-probe"})),
    ]
    assert "probe" in (REPO / "src/xlt/cost/calibration.py").read_text()
    assert findings(words) == set()


PROBE = Identifiers("probe", frozenset({"train_probe", "finetune"}), frozenset({"probe-train", "probe"}))


def test_each_form_of_a_reference_is_found_and_a_word_is_not():
    """The reader itself, on a family named with an English word."""

    def found(source: str, snakemake: bool = False) -> set[str]:
        return references(read_code(source, snakemake), PROBE, {"loss"}, {"probe", "sbert"})

    # references
    assert found("from xlt.families.probe import plan\n") == {"probe"}
    assert found('COLORS = {"probe": "red", "sbert": "blue"}\n') == {"probe"}  # a per-family table
    assert found("import xlt.families.probe.plan as p\n") == {"probe"}
    assert found('log = logging.getLogger("xlt.families.probe.train")\n') == {"probe"}
    assert found('cmd = "python -m xlt.families.probe.job"\n') == {"probe"}
    assert found('p = registry.plan("probe")\n') == {"probe"}
    assert found('x = config["probe"]["layers"]\n') == {"probe"}
    assert found('x = config.get("probe", {})\n') == {"probe"}
    assert found('run(family="probe")\n') == {"probe"}
    assert found('ok = name in ("probe", "sbert")\n') == {"probe"}
    assert found('t = f"{RESULTS}/tables/probe.csv"\n') == {"probe"}
    assert found('t = f"{RESULTS}/tables/probe_summary.csv"\n') == {"probe"}
    assert found('d = "results/runs/probe/{run_id}"\n') == {"probe"}
    assert found('raise XltError("set probe.layers to a list")\n') == {"probe"}
    assert found('hint = "see probe.layers"\n') == {"probe"}
    assert found('shell = "xlt probe-train --out x"\n') == {"probe-train"}
    assert found('if rule == "finetune":\n    pass\n') == {"finetune"}
    assert found("rule train_probe:\n    shell: 'x'\n", snakemake=True) == {"train_probe"}
    assert found("rule x:\n    input: rules.finetune.output\n", snakemake=True) == {"finetune"}
    # words: identifiers, dict keys, indices of other objects, prose, a word inside a longer string
    assert found("probe = 1\nprobe_seconds = probe * 2\nloop.probe()\n") == set()
    assert found('profile = {"probe": {"seconds": 1}}\nx = loop["probe"]\ny = loop.get("probe")\n') == set()
    assert found('"""The probe run."""\n# probe\nmsg = "the probe took 3 s"\n') == set()
    assert found('tag = "probe/cka/layer_3"\nkey = "loop_probe"\nfile = "probe.json"\n') == set()
    assert found('"""Finetune."""\nx = "finetune the head first"\n') == set()
    # a spelling the project declares as something shared is that, as a bare string
    shared = Identifiers("probe", frozenset({"loss"}), frozenset())
    assert references(read_code('m = row["metric"] == "loss"\n', False), shared, {"loss"}) == set()
    assert references(read_code("x = rules.loss.output\n", True), shared, {"loss"}) == {"loss"}


def test_yaml_keys_name_sections_and_descriptions_are_prose():
    doc = yaml_code(yaml.safe_load("description: probe\nproperties:\n  probe: {default: 1, description: probe}\n"))
    assert references(doc, PROBE) == {"probe"}
    assert references(yaml_code(yaml.safe_load("properties:\n  layers: {description: the probe}\n")), PROBE) == set()
