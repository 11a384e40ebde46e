"""The examples in the package's docstrings and type stubs run and give what they show."""

from __future__ import annotations

import ast
import doctest
import inspect
from pathlib import Path

import pytest

import simhash_store
import simhash_store.compat
import simhash_store.errors

PACKAGE = Path(simhash_store.__file__).parent
REPO = Path(__file__).resolve().parents[2]
SOURCE_PACKAGE = REPO / "python" / "simhash_store"


@pytest.mark.parametrize("module", [simhash_store, simhash_store.errors, simhash_store.compat])
def test_module_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, raise_on_error=False)
    assert result.attempted > 0
    assert result.failed == 0


def stub_docstrings():
    stub = SOURCE_PACKAGE / "_native.pyi"
    tree = ast.parse(stub.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)):
            doc = ast.get_docstring(node, clean=True)
            if doc and ">>>" in doc:
                yield getattr(node, "name", "module"), doc


STUBS = list(stub_docstrings())


def test_stubs_have_examples():
    assert len(STUBS) >= 10


@pytest.mark.parametrize("name, doc", STUBS, ids=[n for n, _ in STUBS])
def test_stub_examples(name, doc):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(doc, {}, name, "_native.pyi", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0, f"example of {name} failed (run pytest -s to see it)"


def test_every_public_name_is_documented_and_typed():
    stub = (SOURCE_PACKAGE / "_native.pyi").read_text()
    for name in simhash_store.__all__:
        obj = getattr(simhash_store, name)
        if isinstance(obj, int):
            continue
        if name.endswith("Error") or name in ("Error", "Store", "Client", "to_signed", "to_unsigned"):
            assert obj.__doc__, name
            continue
        assert f"class {name}" in stub or f"def {name}" in stub, name


def stub_members():
    tree = ast.parse((SOURCE_PACKAGE / "_native.pyi").read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and ast.get_docstring(node):
            yield node.name, None, ast.get_docstring(node, clean=True)
        if isinstance(node, ast.ClassDef):
            if ast.get_docstring(node):
                yield node.name, None, ast.get_docstring(node, clean=True)
            for f in node.body:
                # Slots such as __len__ keep Python's own docstrings at run time.
                if isinstance(f, ast.FunctionDef) and ast.get_docstring(f) and not f.name.startswith("__"):
                    yield node.name, f.name, ast.get_docstring(f, clean=True)


MEMBERS = list(stub_members())


@pytest.mark.parametrize("owner, name, doc", MEMBERS, ids=[f"{o}.{n}" if n else o for o, n, _ in MEMBERS])
def test_runtime_docstrings_equal_the_stubs(owner, name, doc):
    obj = getattr(simhash_store, owner)
    if name is not None:
        obj = getattr(obj, name)
    runtime = inspect.cleandoc(obj.__doc__ or "")
    assert runtime == doc, f"the docstring of {owner}.{name} differs between Rust and _native.pyi"


def readme_blocks():
    for readme in (REPO / "README.md", REPO / "python" / "README.md"):
        text = readme.read_text()
        for i, block in enumerate(text.split("```python\n")[1:]):
            yield f"{readme.parent.name}/{readme.name}#{i}", block.split("```")[0]


BLOCKS = list(readme_blocks())


def test_readmes_have_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("name, code", BLOCKS, ids=[n for n, _ in BLOCKS])
def test_readme_examples_run(name, code, tmp_path, monkeypatch):
    """Examples written as a session (``>>>``) print what they show; others run."""
    monkeypatch.chdir(tmp_path)
    if ">>>" not in code:
        exec(compile(code, name, "exec"), {"__name__": "readme_example"})
        return
    test = doctest.DocTestParser().get_doctest(code, {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0, f"the example {name} printed something else (run pytest -s to see it)"
