"""The README: a short entry page that starts with the three commands and whose example runs."""

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_readme_starts_with_the_three_commands():
    first = blocks("bash")[0]
    assert 'pip install -e ".[dev]"' in first and "giql-spark demo" in first and "pytest" in first


def test_readme_fits_on_a_screen_or_two():
    assert len(README.splitlines()) <= 150


def test_python_example_runs_as_written(spark, capsys):
    runnable = [b for b in blocks("python") if ".remote(" not in b]
    assert runnable
    namespace: dict = {}
    for code in runnable:
        exec(compile(code, "README.md", "exec"), namespace)
    assert "peak" in capsys.readouterr().out


def test_links_into_the_docs_resolve():
    docs = Path(__file__).resolve().parents[1] / "docs"
    for target in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (docs.parent / target).exists(), target
