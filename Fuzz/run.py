#!/usr/bin/env python3
"""Runs the libFuzzer build of tilekit-fuzz on each target for a set time, one target after
another, and prints per target: executions, speed, coverage (libFuzzer's cov: edges and ft:
features), corpus size and every crash with the frame of TileKit it stopped in.

    python3 Fuzz/run.py BINARY [--seconds 60] [--runs N] [TARGET...]     (make fuzz runs this)

With --runs N each target runs until it has N executions (or --seconds have passed, if
given as well: whichever comes first; --seconds 0 means no time limit).

Each target starts from its committed seeds (Fuzz/corpus/TARGET) plus what earlier runs
found (.build/fuzz/corpus/TARGET, kept between runs, never committed by this script). It
runs in libFuzzer's fork mode with crashes, out-of-memory and timeouts ignored, so one
crash does not end the run: every input that crashed is saved under
.build/fuzz/findings/TARGET/ (crash-*, oom-*, timeout-*). To keep one, copy it to
Fuzz/crashes/TARGET/ and add a line to Fuzz/crashes/README.md.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

FUZZ = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(FUZZ)
WORK = os.path.join(REPO, ".build", "fuzz")
# Not .build/fuzz/artifacts: that is SwiftPM's folder for binary artifacts in the fuzz
# build's scratch path, and every `make fuzz-build` removes the empty folders in it (a
# target whose folder went mid-run had every libFuzzer job fail at start).
FINDINGS = os.path.join(WORK, "findings")

# libFuzzer's own limits, the ones the replay (make test) applies too.
LIMITS = ["-rss_limit_mb=2048", "-malloc_limit_mb=2048", "-timeout=10"]
# ASan's leak checker is off (ASAN_OPTIONS below: the Swift runtime and Foundation keep
# caches that look like leaks); libFuzzer's own check would only run every input that adds
# coverage a second time, counting mallocs, to report nothing.
NO_LEAK_CHECK = ["-detect_leaks=0"]
REPLAYS = 60


def targets():
    """Every target with a seed corpus (all of them: FuzzReplayTests checks)."""
    return sorted(name for name in os.listdir(os.path.join(FUZZ, "corpus")) if os.path.isdir(os.path.join(FUZZ, "corpus", name)))


def link(binary, target):
    """fuzz-TARGET, a link to the one binary: the target is named by the program's name, so
    libFuzzer's child processes (fork mode, -minimize_crash) run the same target."""
    path = os.path.join(WORK, "bin", "fuzz-" + target)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.remove(path)
    os.symlink(os.path.abspath(binary), path)
    return path


# Frames of libFuzzer, the sanitizers, the C library and the Swift runtime's trap machinery:
# not where a crash is.
RUNTIME = ("compiler-rt", "/libc.so", "libc_start", "_assertionFailure", "fatalErrorMessage", "swift_slowAlloc",
           "swift_allocObject", "__sanitizer", "__asan", "fuzzer::", "_start ")


def demangle(symbol):
    text = subprocess.run(["swift", "demangle", "--simplified", "--compact", symbol], capture_output=True, text=True).stdout.strip()
    return (text or symbol)[:110]


def signature(log):
    """What an input hit: the trap message (or sanitizer report), the top frame outside the
    runtime, and the first frame of TileKit (not of the fuzz targets) when it differs."""
    message, top, ours = None, None, None
    for line in log.splitlines():
        if message is None:
            for marker in ("Fatal error", "out-of-memory (", "ERROR: AddressSanitizer", "ERROR: libFuzzer: timeout", "deadly signal"):
                if marker in line:
                    message = line.strip().lstrip("=0123456789 ")
        match = re.match(r"\s*#\d+ 0x[0-9a-f]+ in (\S+) ?(\S*)", line)
        if not match or any(part in line for part in RUNTIME):
            continue
        symbol, where = match.group(1), match.group(2)
        if top is None:
            top = "%s (%s)" % (demangle(symbol), where.split("/Sources/", 1)[-1] if where else "?")
        if "/Sources/" in where and "/Sources/TileKitFuzz/" not in where:
            ours = "%s at Sources/%s" % (demangle(symbol), where.split("/Sources/", 1)[1])
            break
    # Sizes and addresses differ from input to input; what was hit does not.
    message = re.sub(r"0x[0-9a-f]+|\b\d+\b", "N", message) if message else None
    parts = [message or "no report", "top: " + (top or "?")]
    if ours and not (top or "").startswith(ours.split(" at ")[0]):
        parts.append("TileKit: " + ours)
    return "; ".join(parts)


def run(binary, target, seconds, jobs, runs=None):
    program = link(binary, target)
    corpus = os.path.join(WORK, "corpus", target)
    artifacts = os.path.join(FINDINGS, target)
    scratch = os.path.join("/dev/shm" if os.access("/dev/shm", os.W_OK) else WORK, "tilekit-fuzz-%d" % os.getpid())
    for folder in (corpus, artifacts, scratch):
        os.makedirs(folder, exist_ok=True)
    before = set(os.listdir(artifacts))
    env = dict(os.environ,
               SWIFT_BACKTRACE="enable=no",  # libFuzzer and ASan report traps, not the Swift runtime
               TILEKIT_FUZZ_SCRATCH=scratch,
               ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=0:handle_abort=1")
    command = [program, corpus, os.path.join(FUZZ, "corpus", target), "-fork=%d" % jobs, "-ignore_crashes=1",
               "-ignore_ooms=1", "-ignore_timeouts=1", "-artifact_prefix=" + artifacts + "/",
               "-print_final_stats=1"] + LIMITS + NO_LEAK_CHECK
    if seconds > 0:
        command.append("-max_total_time=%d" % seconds)
    if runs:
        command.append("-runs=%d" % runs)
    dictionary = os.path.join(FUZZ, "dictionaries", target + ".dict")
    if os.path.exists(dictionary):
        command.append("-dict=" + dictionary)
    started = time.time()
    log_path = os.path.join(WORK, "logs", target + ".log")
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    with open(log_path, "w") as log:
        subprocess.run(["nice", "-n", "10"] + command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=scratch)
    elapsed = time.time() - started
    shutil.rmtree(scratch, ignore_errors=True)
    text = open(log_path, errors="replace").read()

    # Fork mode reports "#N: cov: C ft: F corp: K exec/s: E oom/timeout/crash: a/b/c time: T".
    status = re.findall(r"#(\d+): cov: (\d+) ft: (\d+) corp: (\d+) exec/s: \d+ oom/timeout/crash: (\d+)/(\d+)/(\d+) time: (\d+)s", text)
    if status:
        execs, cov, ft, corp, ooms, timeouts, crashes, fuzzed = map(int, status[-1])
    else:  # died before the first report
        execs = cov = ft = corp = ooms = timeouts = crashes = fuzzed = 0
    speed = execs // max(1, fuzzed)
    if not os.path.isdir(artifacts):  # removed while the target ran: libFuzzer's jobs then failed at once
        print("%s: %s was removed during the run; its jobs could not start after that" % (target, os.path.relpath(artifacts, REPO)))
        os.makedirs(artifacts, exist_ok=True)
    new = sorted(set(os.listdir(artifacts)) - before)
    print("%-18s %9d execs %7d/s  cov %5d  ft %6d  corpus %5d  crash/oom/timeout %d/%d/%d  (%.0f s)"
          % (target, execs, speed, cov, ft, corp, crashes, ooms, timeouts, elapsed))
    report(program, [os.path.join(artifacts, name) for name in new], env)
    return crashes + ooms + timeouts


def report(program, paths, env):
    """Replays crashing inputs (once each: that prints the stack trace) and groups them by
    what they hit; at most REPLAYS of them, since a crash the fuzzer keeps finding makes
    hundreds."""
    groups = {}
    scratch = os.path.join(WORK, "replay-scratch")
    os.makedirs(scratch, exist_ok=True)
    env = dict(env, TILEKIT_FUZZ_SCRATCH=scratch)  # what crashed replays leave, removed below
    for path in paths[:REPLAYS]:
        replay = subprocess.run([program, path, "-runs=1"] + LIMITS, capture_output=True, text=True, env=env, cwd=WORK)
        groups.setdefault(signature(replay.stdout + replay.stderr), []).append(path)
    shutil.rmtree(scratch, ignore_errors=True)
    for hit, group in sorted(groups.items(), key=lambda item: -len(item[1])):
        print("    %d x %s\n        e.g. %s" % (len(group), hit, os.path.relpath(min(group, key=os.path.getsize), REPO)))
    if len(paths) > REPLAYS:
        print("    (%d more inputs not replayed)" % (len(paths) - REPLAYS))


def triage(binary, target):
    """Groups every input saved for a target by what it hits (--triage)."""
    folder = os.path.join(FINDINGS, target)
    paths = sorted(os.path.join(folder, name) for name in os.listdir(folder)) if os.path.isdir(folder) else []
    print("%s: %d saved inputs" % (target, len(paths)))
    report(link(binary, target), paths, dict(os.environ, SWIFT_BACKTRACE="enable=no", ASAN_OPTIONS="detect_leaks=0"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=int, default=None, help="seconds per target (60 unless --runs is given; 0: no limit)")
    parser.add_argument("--runs", type=int, default=None, help="executions per target (libFuzzer -runs)")
    parser.add_argument("--jobs", type=int, default=1, help="fuzzing processes per target (libFuzzer -fork)")
    parser.add_argument("--triage", action="store_true", help="only group the inputs saved by earlier runs by what they hit")
    parser.add_argument("targets", nargs="*")
    arguments = parser.parse_intermixed_args()
    chosen = arguments.targets or targets()
    if arguments.triage:
        for target in chosen:
            triage(arguments.binary, target)
        return 0
    seconds = arguments.seconds if arguments.seconds is not None else (0 if arguments.runs else 60)
    budget = " and ".join(part for part in ["%d s" % seconds if seconds else "", "%d executions" % arguments.runs if arguments.runs else ""] if part)
    print("fuzzing %d targets for %s each, whichever comes first (logs in .build/fuzz/logs/)" % (len(chosen), budget or "ever"))
    failures = 0
    for target in chosen:
        failures += run(arguments.binary, target, seconds, arguments.jobs, arguments.runs)
    print("%d failing inputs" % failures if failures else "no crash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
