#!/usr/bin/env python3
"""Runs every ```console block of README.md and compares what it prints with what the
README shows, so a README example that stops being true fails `make test`.

How a console block is read (a reader sees an ordinary shell session):
- a line starting with `$ ` is a command; a command line ending in `\\` continues on the next;
- the lines after it, up to the next command, are what it prints (standard output and
  error together, as a terminal shows them);
- `...` in an output line matches any text within that line (times, ports, paths, sizes);
- an output line that is just `[...]` matches any number of lines, none included
  (progress bars, long listings).
- An HTML comment right before a block, `<!-- readme-check: file NAME` followed by lines
  and `-->`, writes that file first (the input an example needs, kept out of sight).

Blocks run in order, each as one bash script (so `cd`, variables and `echo $?` carry from
one command to the next) in one temporary folder shared by all blocks, with TILEKIT's folder
first on PATH, the repository's Examples linked in and docs/data copied in. Blocks that
cannot run quickly or alone (a server, a cluster) are written ```sh and are not run.
Before the README, the checker runs a few blocks of its own, one of them false on purpose,
and stops if it would let a false example pass.

usage: check-readme.py TILEKIT [README.md]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = "@@readme-check-command@@"
TIMEOUT = 120  # seconds per block; every example is meant to take a few


def blocks(text):
    """(line number, setup files, [(command, [expected lines])]) for each console block."""
    lines = text.split("\n")
    found = []
    i = 0
    pending_files = {}
    while i < len(lines):
        line = lines[i]
        if line.startswith("<!-- readme-check: file "):
            name = line[len("<!-- readme-check: file "):].strip()
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "-->":
                body.append(lines[i])
                i += 1
            pending_files[name] = "\n".join(body) + "\n"
            i += 1
            continue
        if line.strip() == "```console":
            start = i + 1
            i += 1
            commands = []
            while i < len(lines) and lines[i].strip() != "```":
                current = lines[i]
                if current.startswith("$ "):
                    command = current[2:]
                    while command.endswith("\\") and i + 1 < len(lines):
                        i += 1
                        command = command[:-1] + " " + lines[i].strip()
                    commands.append((command, []))
                elif commands:
                    commands[-1][1].append(current)
                elif current.strip():
                    sys.exit(f"README.md:{i + 1}: a console block must start with a `$ ` command, found {current!r}")
                i += 1
            found.append((start, pending_files, commands))
            pending_files = {}
        elif line.strip().startswith("```"):
            pending_files = {}
        i += 1
    return found


def line_pattern(expected):
    return re.compile(".*".join(re.escape(part) for part in expected.split("...")) + r"\Z", re.S)


def matches(expected, actual):
    """True when actual lines fit expected lines with their wildcards."""
    expected = [e.rstrip() for e in expected]
    while expected and not expected[-1]:
        expected.pop()
    actual = [a.rstrip() for a in actual]
    while actual and not actual[-1]:
        actual.pop()
    memo = {}

    def fit(e, a):
        if (e, a) in memo:
            return memo[(e, a)]
        if e == len(expected):
            result = a == len(actual)
        elif expected[e] == "[...]":
            result = any(fit(e + 1, k) for k in range(a, len(actual) + 1))
        else:
            result = a < len(actual) and line_pattern(expected[e]).match(actual[a]) is not None and fit(e + 1, a + 1)
        memo[(e, a)] = result
        return result

    return fit(0, 0)


def run_block(commands, folder, env):
    # Each command is preceded by a marker line; `$?` is kept across the marker, so
    # `$ echo $?` shows the previous command's status as it would in a terminal.
    script = ["__rc=0"]
    for command, _ in commands:
        script.append(f"printf '%s\\n' '{MARK}'; (exit $__rc); {command}")
        script.append("__rc=$?")
    out = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    parts = out.stdout.split(MARK + "\n")
    return [p.split("\n") for p in parts[1:]]


def check(text, folder, env, say=print):
    """Runs the console blocks of `text` in `folder`; returns (failures, commands checked)."""
    failures = 0
    checked = 0
    for start, files, commands in blocks(text):
        for name, body in files.items():
            with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                f.write(body)
        try:
            outputs = run_block(commands, folder, env)
        except subprocess.TimeoutExpired:
            say(f"README.md:{start}: FAIL: the block took over {TIMEOUT} s")
            failures += 1
            continue
        for index, (command, expected) in enumerate(commands):
            checked += 1
            actual = outputs[index] if index < len(outputs) else ["(the block stopped before this command)"]
            while actual and not actual[-1]:
                actual = actual[:-1]
            if not matches(expected, actual):
                failures += 1
                say(f"README.md:{start}: FAIL: $ {command}")
                say("  the README shows:")
                say("".join(f"    | {line}\n" for line in expected).rstrip("\n") or "    (nothing)")
                say("  it printed:")
                say("".join(f"    | {line}\n" for line in actual).rstrip("\n") or "    (nothing)")
    return failures, checked


def self_test(env):
    """The checker checks itself first: a README whose example is false must fail."""
    assert matches(["took ... s"], ["took 0.2 s"]) and not matches(["took ... s"], ["took 0.2 ms!"])
    assert matches(["a", "[...]", "z"], ["a", "b", "c", "z"]) and matches(["a", "[...]", "z"], ["a", "z"])
    assert not matches(["a", "z"], ["a", "b", "z"]) and not matches(["a"], ["a", "extra"])
    assert matches(["a[b]c"], ["a[b]c"]) and matches(['"bbox":[...],"x"'], ['"bbox":[1,2],"x"'])
    good = "```console\n$ echo hello; echo 'took 1.5 s'\nhello\ntook ... s\n$ false\n$ echo $?\n1\n```\n"
    stale = "```console\n$ echo hello\ngoodbye\n```\n"
    setup = "<!-- readme-check: file in.txt\nfrom the comment\n-->\n```console\n$ cat in.txt\nfrom the comment\n```\n"
    with tempfile.TemporaryDirectory(prefix="tilekit-readme-self-") as folder:
        quiet = lambda _: None
        assert check(good, folder, env, quiet) == (0, 3), "a true example failed"
        assert check(setup, folder, env, quiet) == (0, 1), "a setup file was not written"
        assert check(stale, folder, env, quiet) == (1, 1), "a false example passed"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tilekit = os.path.abspath(sys.argv[1])
    readme = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "README.md")
    if not os.access(tilekit, os.X_OK):
        sys.exit(f"check-readme: {tilekit} is not an executable tilekit")
    env = dict(os.environ, PATH=os.path.dirname(tilekit) + os.pathsep + os.environ.get("PATH", ""), LC_ALL="C.UTF-8")
    self_test(env)
    if not os.path.exists(os.path.join(ROOT, "Examples", "central-park", "build", "pois.geojson")):
        # The README's game example reads the prepared central-park map.
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "prepare-examples.py"), tilekit], check=True)
    text = open(readme, encoding="utf-8").read()
    with tempfile.TemporaryDirectory(prefix="tilekit-readme-") as folder:
        os.symlink(os.path.join(ROOT, "Examples"), os.path.join(folder, "Examples"))
        shutil.copytree(os.path.join(ROOT, "docs", "data"), os.path.join(folder, "docs", "data"))
        failures, checked = check(text, folder, env)
    if failures:
        sys.exit(f"check-readme: {failures} of {checked} README commands print something else than README.md shows")
    print(f"check-readme: all {checked} commands of README.md's console blocks print what it shows")


if __name__ == "__main__":
    main()
