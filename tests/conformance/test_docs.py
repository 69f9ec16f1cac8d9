"""The README and docs/ say what the suite does today: the README is a short manual whose links resolve and whose
commands the CLI accepts; docs/rules.md is what the rule catalogue gives; docs/trace-format.md documents every
field of the trace line."""

import importlib.util
import re
import shlex
from pathlib import Path

import click
import pytest

from sqs_conformance.conformance.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def github_slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def rules_page():
    spec = importlib.util.spec_from_file_location("rules_page", DOCS / "rules_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def headings(path: Path, slug) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_the_readme_is_a_manual_of_at_most_300_lines_with_a_contents_list():
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    contents = text.split("## Contents\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- \[[^]]+\]\(#([^)]+)\)$", contents, flags=re.M)
    sections = [github_slug(line[3:]) for line in text.splitlines() if line.startswith("## ")]
    assert listed == [s for s in sections if s != "contents"]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_to_a_file_and_heading(path):
    for link in links(path):
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        assert file.is_file(), f"{path.name}: {link} names no file"
        if anchor and file.suffix == ".md":
            assert anchor in headings(file, github_slug if file == README else rules_page().slug), \
                f"{path.name}: {link} names no heading"


def commands(path: Path) -> list[list[str]]:
    """Every `sqs-conformance ...` line of the file's code blocks that is a command, not a synopsis (a line ending
    in a backslash goes on on the next, as in a shell)."""
    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", path.read_text(), flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line.startswith("sqs-conformance ") and "[" not in line and "..." not in line:
                found.append(shlex.split(line, comments=True)[1:])
    return found


def test_every_command_of_the_readme_and_the_guides_is_one_the_cli_accepts():
    checked = 0
    for path in markdown_files():
        for args in commands(path):
            parse(args)
            checked += 1
    assert checked >= 10
    with pytest.raises(click.UsageError, match="No such option"):  # the check itself can fail
        parse(["run", "--target", "moto", "--no-such-option"])
    with pytest.raises(click.BadParameter):
        parse(["diff", "--profile", "A", "--profile", "B"])


def parse(args: list[str]) -> None:
    """Parse a command line as `sqs-conformance` would, running nothing."""
    with main.make_context("sqs-conformance", list(args)) as context:
        tokens = [*getattr(context, "_protected_args", []), *context.args]
        name, command, rest = main.resolve_command(context, tokens)
        command.make_context(name, rest, parent=context)


def test_the_readme_names_the_two_set_up_scripts_that_exist():
    text = README.read_text()
    for script in (".ci/first-run", ".ci/run"):
        assert f"bash {script}\n" in text and (ROOT / script).is_file()
    assert "run --target moto --report runs/report" in (ROOT / ".ci/first-run").read_text()


def test_the_rules_page_is_what_the_rule_catalogue_gives_now():
    assert (DOCS / "rules.md").read_text() == rules_page().page(), "run python3 docs/rules_page.py"


def test_the_rules_page_names_every_rule_and_refuses_a_source_the_evidence_lacks():
    from sqs_conformance.model.rules import CATALOGUE, Rule
    from sqs_conformance.model.sources import row

    module = rules_page()
    text = module.page()
    assert all(f"\n## {r.id}\n" in text for r in CATALOGUE)
    stray = Rule("X-STRAY", "cites nothing real", frozenset({"sqs-standard"}), (row("no-such-row"),))
    with pytest.raises(SystemExit, match="no-such-row"):
        module.page((stray,))


def test_the_trace_format_page_documents_every_field_of_the_trace_line():
    from sqs_conformance.model.trace_format import NAMES

    text = (DOCS / "trace-format.md").read_text()
    table = text[text.index("| field | meaning |"):].split("\n\n")[0]
    documented = {name for row in table.splitlines()[2:] for name in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert documented == set(NAMES)
