#!/usr/bin/env python3
"""[action] The GitHub Action (action.yml, .github/action/btfslim-action.sh) run as a runner runs it
(runner.py): the build from this checkout's source into the cache and the cached build on the next job,
the installed btfslim, and each command's annotations, step summary and exit status against what the
same btfslim prints when run directly."""

import html
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from runner import SOURCE_DIR, Checks, Job, run_action, temp_dir  # noqa: E402

BTFSLIM = os.environ["BTFSLIM"]
TESTS_BUILD = os.environ["BTFSLIM_TEST_BUILD_DIR"]
c = Checks()
root = temp_dir("btfslim-action-")
cache_store = os.path.join(root, "cache-store")
os.makedirs(cache_store)


def direct(args, cwd, env=None):
    e = dict(os.environ)
    e.pop("GITHUB_STEP_SUMMARY", None)
    e.update(env or {})
    return subprocess.run([BTFSLIM] + args, cwd=cwd, capture_output=True, text=True, env=e)


def workspace(job):
    shutil.copy(os.path.join(TESTS_BUILD, "core_target_moved.o"), os.path.join(job.workspace, "kernel.o"))
    shutil.copy(os.path.join(TESTS_BUILD, "core_target_errors.o"), os.path.join(job.workspace, "errors kernel.o"))
    shutil.copy(os.path.join(TESTS_BUILD, "core_errors.bpf.o"), os.path.join(job.workspace, "prog.bpf.o"))
    shutil.copy(os.path.join(TESTS_BUILD, "core_fields.bpf.o"), os.path.join(job.workspace, "fields.bpf.o"))
    with open(os.path.join(job.workspace, "btfslim.toml"), "w") as f:
        f.write('[[budget]]\nname = "kernel BTF"\ninput = "kernel.o"\nmessage = "ask first"\n'
                'total = "100 B"\nkind.STRUCT = "1 MiB"\n')
    with open(os.path.join(job.workspace, "roomy.toml"), "w") as f:
        f.write('[[budget]]\nname = "kernel BTF"\ninput = "kernel.o"\ntotal = "1 MiB"\n')
    with open(os.path.join(job.workspace, "bad.toml"), "w") as f:
        f.write('[[budget]]\nname = "kernel BTF"\ninput = "kernel.o"\ntotal = "lots"\n')


def annotations(text):
    return [line for line in text.split("\n") if line.startswith("::error")]


def unescape_data(s):
    return s.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


# 1. A first job: nothing cached, so the install step builds btfslim from this checkout's source (the
#    action's own revision), then runs budget with --format github: an exceeded limit fails the step.
#    The action's meson build honours CFLAGS/CXXFLAGS as any meson build does: -O0 here, as what is
#    checked is the build, the cache and the commands, not the optimizer (the test build compiles the
#    same sources at -O3), and at -O3 this compile was most of the test's time.
job1 = Job(os.path.join(root, "job1"), cache_store, {"CFLAGS": "-O0", "CXXFLAGS": "-O0"})
workspace(job1)
r = run_action(job1, {"command": "budget"})
key = r.steps["key"][1].get("key", "")
c.check(key.startswith("btfslim-") and "-src-" in key, "key: the source's hash names the cache", key)
c.equal(r.steps["key"][1].get("cache-path"), os.path.join(job1.temp, "btfslim-cache"), "key: the cache path")
install_status, _, install_out, install_err, _ = r.steps.get("install", (None, {}, "", "", ""))
c.check(f"btfslim: building {key}" in install_out, "install: nothing cached, so it builds", install_out[-2000:])
built = r.outputs.get("path", "")
# Everything below runs the binary this build made: without one, say why and stop.
if not c.check(install_status == 0 and built, "install: the build from source succeeds",
               f"install step: {'did not run' if install_status is None else f'exit status {install_status}'}\n"
               f"stdout:\n{install_out[-3000:]}\nstderr:\n{install_err[-3000:]}"):
    sys.exit(c.finish())
c.equal(built, os.path.join(job1.temp, "btfslim-cache", "bin", "btfslim"), "install: the built binary is in the cache")
want_version = direct(["--version"], job1.workspace).stdout
c.check(want_version.split("\n")[0] in install_out, "install: runs the built btfslim --version", install_out[-500:])
c.equal(job1.path_additions, [os.path.dirname(built)], "install: the binary's directory goes on GITHUB_PATH")
want = direct(["budget", "--format", "github"], job1.workspace, {"GITHUB_STEP_SUMMARY": os.path.join(root, "s1")})
c.equal(r.status, 1, "budget exceeded: the action fails with status 1")
c.equal(r.outputs["exit-code"], "1", "budget exceeded: output exit-code")
c.equal(r.steps["run"][2], want.stdout, "budget: the action runs it with --format github (stdout as btfslim's)")
errs = annotations(r.steps["run"][2])
c.check(len(errs) == 1 and errs[0].startswith("::error file=btfslim.toml,line=5,col=9,title=btfslim budget%3A kernel BTF::")
        and unescape_data(errs[0]).endswith("\nask first"), "budget: one ::error on the limit's line", "\n".join(errs))
c.equal(r.steps["run"][4], open(os.path.join(root, "s1")).read(), "budget: the step summary is btfslim's own table")
c.check("| :x: | kernel BTF | total = 100 B |" in r.summary, "budget: the summary shows the breach")
job1.end()
c.check(os.path.isfile(os.path.join(cache_store, key, "bin", "btfslim")), "the build is saved under its key")

# 2. The next job restores the cache: no build.
job2 = Job(os.path.join(root, "job2"), cache_store)
workspace(job2)
r = run_action(job2, {"command": "budget", "args": "-c roomy.toml"})
c.equal(r.steps["key"][1].get("key"), key, "next job: the same key")
c.check("btfslim: using the cached build" in r.steps["install"][2] and "building" not in r.steps["install"][2],
        "next job: the cached build is used", r.steps["install"][2])
c.equal(r.status, 0, "budget within its limits: the action succeeds")
c.equal(r.outputs["exit-code"], "0", "budget ok: output exit-code 0")
c.equal(annotations(r.stdout), [], "budget ok: no annotation")
cached = r.outputs["path"]
c.equal(subprocess.run([cached, "--version"], capture_output=True, text=True).stdout, want_version,
        "the cached binary is this checkout's btfslim")

# A changed source is another key (the cache never serves a stale build).
changed = os.path.join(root, "changed-source")
subprocess.run(["git", "-C", SOURCE_DIR, "archive", "--format=tar", "-o", os.path.join(root, "src.tar"), "HEAD"],
               check=True)
os.makedirs(changed)
subprocess.run(["tar", "-C", changed, "-xf", os.path.join(root, "src.tar")], check=True)
os.makedirs(os.path.join(changed, ".github", "action"), exist_ok=True)
shutil.copy(os.path.join(SOURCE_DIR, ".github", "action", "btfslim-action.sh"), os.path.join(changed, ".github", "action"))
shutil.copy(os.path.join(SOURCE_DIR, "action.yml"), changed)
same = run_action(Job(os.path.join(root, "job-key1"), cache_store), {"command": ""}, action_dir=changed)
with open(os.path.join(changed, "src", "cli", "main.cc"), "a") as f:
    f.write("\n// changed\n")
other = Job(os.path.join(root, "job-key2"), cache_store)
rk = other.run_script("key", f'"{changed}/.github/action/btfslim-action.sh" key', {"INPUT_VERSION": ""})
c.check(rk[1].get("key") not in ("", same.steps["key"][1].get("key")), "a changed source file changes the key",
        f"{rk[1]} vs {same.steps['key'][1]}")

# 3. Commands without --format github: the table goes to the step summary, as btfslim prints it.
def has_github(command):
    opts = direct(["__options"], root).stdout
    return any(l.split("\t")[0] == command and l.split("\t")[1].startswith("--format") and
               "github" in l.split("\t")[3].split() for l in opts.split("\n") if l.count("\t") >= 3)


r = run_action(job2, {"command": "measure", "args": "--by kind kernel.o"})
want = direct(["measure", "--by", "kind", "kernel.o"], job2.workspace)
c.equal(r.status, 0, "measure: status 0")
c.equal(r.steps["run"][2], want.stdout, "measure: the table in the log as btfslim prints it")
c.check(html.escape(want.stdout, quote=False) in r.steps["run"][4] and "<pre>" in r.steps["run"][4],
        "measure: the table in the step summary", r.steps["run"][4][:800])
c.check(r.steps["run"][4].startswith("### `btfslim measure`: exit status 0"), "measure: the summary's heading")
c.equal(annotations(r.stdout), [], "measure ok: no annotation")

# Quoting in args as a shell takes it: a file name with a space.
r = run_action(job2, {"command": "measure", "args": "'errors kernel.o'"})
c.equal((r.status, r.steps["run"][2]), (0, direct(["measure", "errors kernel.o"], job2.workspace).stdout),
        "args: quotes keep a file name with a space whole")

# A failure: btfslim's stderr becomes the annotations, escaped, and the status is btfslim's.
r = run_action(job2, {"command": "measure", "args": "'50% missing.btf'"})
want = direct(["measure", "50% missing.btf"], job2.workspace)
c.equal((r.status, r.outputs["exit-code"]), (want.returncode, str(want.returncode)), "measure of a missing file: status 2")
errs = annotations(r.stdout)
c.equal([unescape_data(e.split("::", 2)[2]) for e in errs], want.stderr.strip("\n").split("\n"),
        "measure failed: one ::error per line btfslim wrote to stderr")
c.check(all("%25" in e for e in errs) and all(e.startswith("::error title=btfslim measure::") for e in errs),
        "measure failed: % escaped in the annotation", "\n".join(errs))
c.check("exit status 2" in r.steps["run"][4] and html.escape(want.stderr.strip(), quote=False) in r.steps["run"][4],
        "measure failed: the summary says so", r.steps["run"][4])

# check: with --format github once the command has it (the binary says so in __options), else its table.
args = ["--btf", "errors kernel.o", "prog.bpf.o"]
r = run_action(job2, {"command": "check", "args": "--btf 'errors kernel.o' prog.bpf.o"})
github = has_github("check")
want = direct(["check"] + (["--format", "github"] if github else []) + args, job2.workspace,
              {"GITHUB_STEP_SUMMARY": os.path.join(root, "s2")})
c.check(want.returncode == 1, "check of the error corpus fails (the oracle for the action)", want.stderr)
c.equal(r.status, want.returncode, "check: the action's status is btfslim's")
# Its stdout, then the annotations the action adds from stderr when btfslim failed.
got = r.steps["run"][2]
added = got[len(want.stdout):].split("\n") if got.startswith(want.stdout) else [got]
c.check(got.startswith(want.stdout) and all(l.startswith("::error title=btfslim check::") for l in added if l),
        f"check: run {'with' if github else 'without'} --format github, as __options says", f"{got!r}\n{want.stdout!r}")
if not github:
    c.check(html.escape(want.stdout, quote=False) in r.steps["run"][4], "check: its table in the step summary")
    c.check(len(annotations(r.stdout)) >= 1, "check failed: at least one ::error", r.stdout[-1000:])
r = run_action(job2, {"command": "check", "args": "--btf kernel.o fields.bpf.o"})
want = direct(["check", "--btf", "kernel.o", "fields.bpf.o"], job2.workspace)
c.equal(r.status, want.returncode, f"check that passes or fails: the action's status is btfslim's ({want.returncode})")

# A bad budget file: status 2 and btfslim's one-line error as the annotation.
r = run_action(job2, {"command": "budget", "args": "-c bad.toml"})
want = direct(["budget", "-c", "bad.toml"], job2.workspace)
c.equal(r.status, 2, "a bad budget file: status 2")
c.equal([unescape_data(e.split("::", 2)[2]) for e in annotations(r.stdout)], want.stderr.strip("\n").split("\n"),
        "a bad budget file: btfslim's error as the annotation")

# working-directory
os.makedirs(os.path.join(job2.workspace, "sub"))
shutil.copy(os.path.join(job2.workspace, "kernel.o"), os.path.join(job2.workspace, "sub", "k.o"))
r = run_action(job2, {"command": "measure", "args": "k.o", "working-directory": "sub"})
c.equal(r.status, 0, "working-directory: btfslim runs there")

# 4. version: installed takes the btfslim on PATH (as the Debian package puts it), and no cache.
job3 = Job(os.path.join(root, "job3"), cache_store)
workspace(job3)
bindir = os.path.join(root, "usr-bin")
os.makedirs(bindir)
os.symlink(BTFSLIM, os.path.join(bindir, "btfslim"))
job3.env["PATH"] = bindir + ":" + os.environ["PATH"]
r = run_action(job3, {"command": "measure", "args": "kernel.o", "version": "installed"})
c.equal((r.status, r.steps["key"][1].get("key")), (0, ""), "installed: no cache key, status 0")
c.equal(r.outputs["path"], os.path.join(bindir, "btfslim"), "installed: the btfslim on PATH")
job4 = Job(os.path.join(root, "job4"), cache_store, {"PATH": "/usr/bin:/bin"})
r = run_action(job4, {"command": "measure", "version": "installed"})
c.check(r.status == 2 and "no btfslim on PATH" in r.stdout, "installed, but none on PATH: an error", r.stdout)

# 5. version: a ref of the repository: the key names the commit it resolves to (a moved tag builds again).
head = subprocess.run(["git", "-C", SOURCE_DIR, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
branch = subprocess.run(["git", "-C", SOURCE_DIR, "symbolic-ref", "--short", "-q", "HEAD"], capture_output=True,
                        text=True).stdout.strip()
job5 = Job(os.path.join(root, "job5"), cache_store)
script = f'"{SOURCE_DIR}/.github/action/btfslim-action.sh" key'
if branch:
    rk = job5.run_script("key", script, {"INPUT_VERSION": branch, "BTFSLIM_REPOSITORY": SOURCE_DIR})
    c.check(rk[1].get("key", "").endswith("-ref-" + head), "version a branch: the key is its commit", str(rk))
rk = job5.run_script("key", script, {"INPUT_VERSION": head, "BTFSLIM_REPOSITORY": SOURCE_DIR})
c.check(rk[1].get("key", "").endswith("-ref-" + head), "version a commit: the key is that commit", str(rk))
rk = job5.run_script("key", script, {"INPUT_VERSION": "v1; rm -rf /", "BTFSLIM_REPOSITORY": SOURCE_DIR})
c.check(rk[0] == 2 and "::error" in rk[2], "version not a ref: refused", str(rk))

shutil.rmtree(root, ignore_errors=True)
sys.exit(c.finish())
