"""The examples in the package's docstrings and type stubs run and give what they show."""

from __future__ import annotations

import ast
import doctest
import inspect
from pathlib import Path

import pytest

import simhash_store
import simhash_store.client
import simhash_store.compat
import simhash_store.errors

PACKAGE = Path(simhash_store.__file__).parent
REPO = Path(__file__).resolve().parents[2]
SOURCE_PACKAGE = REPO / "python" / "simhash_store"


@pytest.mark.parametrize(
    "module", [simhash_store, simhash_store.errors, simhash_store.compat, simhash_store.client]
)
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
    """Examples written as interpreter input (``>>>``) print what they show; others run."""
    monkeypatch.chdir(tmp_path)
    if ">>>" not in code:
        exec(compile(code, name, "exec"), {"__name__": "readme_example"})
        return
    test = doctest.DocTestParser().get_doctest(code, {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0, f"the example {name} printed something else (run pytest -s to see it)"


# ---- docs/service.md: its curl and Python examples against a started server ----

SERVICE_DOC = REPO / "docs" / "service.md"


def _split_comment(line: str) -> "tuple[str, str]":
    """``line`` cut at its first ``#`` outside quotes: the command part and the comment."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i], line[i + 1 :].strip()
    return line, ""


def _complete(command: str) -> bool:
    import shlex

    try:
        shlex.split(command)
    except ValueError:  # an open quote: the command goes on on the next line
        return False
    return not command.rstrip().endswith("|")  # a pipe: the next line reads its output


def curl_examples() -> "list[tuple[str, str]]":
    """The curl commands of docs/service.md's sh blocks, in order, each with the answer its
    comment shows (comment lines right after a command go on with it; "" for none)."""
    examples: "list[list[str]]" = []
    for block in SERVICE_DOC.read_text().split("```sh\n")[1:]:
        pending, after_curl = "", False
        for line in block.split("```")[0].splitlines():
            if not pending and line.lstrip().startswith("#"):
                if after_curl:
                    examples[-1][1] += line.lstrip()[1:].strip()
                continue
            pending = f"{pending}\n{line}" if pending else line
            command, comment = _split_comment(pending)
            if _complete(command):
                after_curl = command.split("|")[-1].strip().startswith("curl ")
                if after_curl:
                    examples.append([command.strip(), comment])
                pending = ""
    return [(c, e) for c, e in examples]


def _expected_json(comment: str) -> "str | None":
    """The JSON an example's comment shows (up to its closing brace), or None for prose."""
    if not comment.startswith("{"):
        return None
    depth = 0
    for i, c in enumerate(comment):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth == 0:
            return comment[: i + 1]
    return comment


def _shows(expected: str, answer: str) -> bool:
    """Whether ``answer`` is what ``expected`` shows, ``...`` standing for anything."""
    import re

    pattern = ".*?".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, answer, re.DOTALL) is not None


def _curl(command: str, base: str) -> "tuple[int, str]":
    """Runs a documented ``[python -c ... |] curl -s [-X METHOD] [-H HEADER] URL [-d BODY |
    --data-binary @-]`` as curl would send it (``-d`` posts with curl's form content type;
    ``@-`` is what the Python command before the pipe writes), against ``base`` instead of
    localhost:7700; returns the status and body."""
    import http.client
    import shlex
    import subprocess
    import sys
    import urllib.parse

    producer, _, command = command.rpartition("|")
    stdin = b""
    if producer.strip():
        words = shlex.split(producer)
        assert words[0] == "python", producer
        stdin = subprocess.run([sys.executable, *words[1:]], check=True, capture_output=True).stdout
    args = shlex.split(command)
    assert args[0] == "curl", command
    method, body, url = None, None, None
    headers: "dict[str, str]" = {}
    i = 1
    while i < len(args):
        a = args[i]
        if a == "-s":
            pass
        elif a == "-X":
            i += 1
            method = args[i]
        elif a == "-d":
            i += 1
            body = args[i].encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        elif a == "-H":
            i += 1
            name, _, value = args[i].partition(":")
            headers[name.strip()] = value.strip()
        elif a == "--data-binary":
            i += 1
            assert args[i] == "@-", args[i]
            body = stdin
        else:
            assert url is None and not a.startswith("-"), f"an unexpected curl argument {a!r}"
            url = a
        i += 1
    assert url and url.startswith("localhost:7700/"), url
    target = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
    try:
        conn.request(method or ("POST" if body is not None else "GET"), url[len("localhost:7700") :], body, headers)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


CURL = curl_examples()


def test_service_doc_has_curl_examples():
    assert len(CURL) >= 10, CURL
    assert sum(1 for _, e in CURL if _expected_json(e)) >= 8


@pytest.fixture
def doc_server(cli, tmp_path):
    """A ``simhash-store serve`` of a new store on 127.0.0.1 (a free port) with
    ``--backup-dir``, as the doc starts it; stopped by SIGTERM after the test."""
    import subprocess

    proc = subprocess.Popen(
        [
            str(cli),
            "serve",
            "--store",
            str(tmp_path / "pages.db"),
            "--listen",
            "127.0.0.1:0",
            "--backup-dir",
            str(tmp_path / "backups"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:"), line
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_service_doc_curl_examples_answer_what_they_show(doc_server):
    """Every curl example, in the doc's order against one new store, answers 2xx (or the
    error it shows) with the JSON its comment shows."""
    for command, comment in CURL:
        status, answer = _curl(command, doc_server)
        expected = _expected_json(comment)
        if expected is not None and expected.startswith('{"error":'):
            assert 400 <= status < 500, (command, status, answer)
        else:
            assert 200 <= status < 300, (command, status, answer)
        if expected is not None:
            assert _shows(expected, answer.strip()), f"{command}\nshows:   {expected}\nanswered: {answer}"


def service_python_example() -> str:
    text = SERVICE_DOC.read_text()
    blocks = [b.split("```")[0] for b in text.split("```python\n")[1:]]
    assert len(blocks) == 1, "docs/service.md has one Python example"
    return blocks[0]


def test_service_doc_python_example_prints_what_it_shows(doc_server):
    """The Python client's example, interpreter input run against a new store, prints what it shows
    (its query finds the page it inserted)."""
    code = service_python_example().replace("http://127.0.0.1:7700", doc_server)
    assert code != service_python_example(), "the example names no server address"
    assert ">>>" in code
    test = doctest.DocTestParser().get_doctest(code, {}, "service.md", "docs/service.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, "the example in docs/service.md printed something else (run pytest -s to see it)"
    assert runner.tries >= 5
