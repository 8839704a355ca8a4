#!/usr/bin/env python3
"""Runs the libFuzzer build of tilekit-fuzz on each target for a set time, one target after
another, and prints per target: executions, speed, coverage (libFuzzer's cov: edges and ft:
features), corpus size and every crash with the frame of TileKit it stopped in.

    python3 Fuzz/run.py BINARY [--seconds 60] [TARGET...]     (make fuzz runs this)

Each target starts from its committed seeds (Fuzz/corpus/TARGET) plus what earlier runs
found (.build/fuzz/corpus/TARGET, kept between runs, never committed by this script). It
runs in libFuzzer's fork mode with crashes, out-of-memory and timeouts ignored, so one
crash does not end the run: every input that crashed is saved under
.build/fuzz/artifacts/TARGET/ (crash-*, oom-*, timeout-*). To keep one, copy it to
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

# libFuzzer's own limits, the ones the replay (make test) applies too.
LIMITS = ["-rss_limit_mb=2048", "-malloc_limit_mb=2048", "-timeout=10"]


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


def frame_of(log):
    """The first frame of TileKit (not of the fuzz targets) in an ASan/libFuzzer stack trace,
    demangled, and the trap message when there is one."""
    message = None
    for line in log.splitlines():
        if "Fatal error" in line and message is None:
            message = line.strip()
        if "out-of-memory (malloc(" in line and message is None:
            message = line.strip().lstrip("=0123456789 ")
        if "ERROR: AddressSanitizer" in line and message is None:
            message = line.strip().lstrip("=0123456789 ")
        if "ERROR: libFuzzer: timeout" in line and message is None:
            message = "timeout"
        match = re.match(r"\s*#\d+ 0x[0-9a-f]+ in (\S+) (\S+)", line)
        if match and "/Sources/" in match.group(2) and "/Sources/TileKitFuzz/" not in match.group(2):
            symbol = subprocess.run(["swift", "demangle", "--simplified", "--compact", match.group(1)],
                                    capture_output=True, text=True).stdout.strip() or match.group(1)
            where = match.group(2).split("/Sources/", 1)[1]
            return "%s at Sources/%s%s" % (symbol[:120], where, (" (" + message + ")") if message else "")
    return message or "no TileKit frame in the trace"


def run(binary, target, seconds, jobs):
    program = link(binary, target)
    corpus = os.path.join(WORK, "corpus", target)
    artifacts = os.path.join(WORK, "artifacts", target)
    scratch = os.path.join("/dev/shm" if os.access("/dev/shm", os.W_OK) else WORK, "tilekit-fuzz-%d" % os.getpid())
    for folder in (corpus, artifacts, scratch):
        os.makedirs(folder, exist_ok=True)
    before = set(os.listdir(artifacts))
    env = dict(os.environ,
               SWIFT_BACKTRACE="enable=no",  # libFuzzer and ASan report traps, not the Swift runtime
               TILEKIT_FUZZ_SCRATCH=scratch,
               ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=0:handle_abort=1")
    command = [program, corpus, os.path.join(FUZZ, "corpus", target), "-fork=%d" % jobs, "-ignore_crashes=1",
               "-ignore_ooms=1", "-ignore_timeouts=1", "-max_total_time=%d" % seconds, "-artifact_prefix=" + artifacts + "/",
               "-print_final_stats=1"] + LIMITS
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
    new = sorted(set(os.listdir(artifacts)) - before)
    print("%-18s %9d execs %7d/s  cov %5d  ft %6d  corpus %5d  crash/oom/timeout %d/%d/%d  (%.0f s)"
          % (target, execs, speed, cov, ft, corp, crashes, ooms, timeouts, elapsed))
    for name in new:
        path = os.path.join(artifacts, name)
        # Replaying the input once prints its stack trace.
        replay = subprocess.run([program, path, "-runs=1"] + LIMITS, capture_output=True, text=True, env=env, cwd=WORK)
        print("    %s: %s" % (os.path.relpath(path, REPO), frame_of(replay.stdout + replay.stderr)))
    return crashes + ooms + timeouts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=1, help="fuzzing processes per target (libFuzzer -fork)")
    parser.add_argument("targets", nargs="*")
    arguments = parser.parse_intermixed_args()
    chosen = arguments.targets or targets()
    print("fuzzing %d targets for %d s each (logs in .build/fuzz/logs/)" % (len(chosen), arguments.seconds))
    failures = 0
    for target in chosen:
        failures += run(arguments.binary, target, arguments.seconds, arguments.jobs)
    print("%d failing inputs" % failures if failures else "no crash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
