#!/usr/bin/env python3
"""[workflows] The workflows under .github/workflows and the README's: they parse, every action they use is
pinned to a major version, jobs need jobs that exist; and the sharded btfhub workflow's minimize step, run
through the action (runner.py) once per shard of its matrix for several N, each shard in a workspace of its
own as on separate runners, gathers (as download-artifact's merge-multiple does) into a tree
byte-identical to one unsharded run."""

import filecmp
import os
import re
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(__file__))
from runner import SOURCE_DIR, Checks, Job, run_action, substitute, temp_dir  # noqa: E402

BTFSLIM = os.environ["BTFSLIM"]
TESTS_BUILD = os.environ["BTFSLIM_TEST_BUILD_DIR"]
c = Checks()
root = temp_dir("btfslim-workflows-")


def load(path):
    with open(path) as f:
        # YAML 1.1 reads the key `on` as True; GitHub reads it as "on".
        doc = yaml.safe_load(f)
    if True in doc:
        doc["on"] = doc.pop(True)
    return doc


def readme_workflows():
    text = open(os.path.join(SOURCE_DIR, "README.md")).read()
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "jobs:" in b]


workflow_dir = os.path.join(SOURCE_DIR, ".github", "workflows")
workflows = {name: load(os.path.join(workflow_dir, name)) for name in sorted(os.listdir(workflow_dir))
             if name.endswith((".yml", ".yaml"))}
c.check(len(workflows) >= 2, "there are workflows", str(list(workflows)))
for i, doc in enumerate(readme_workflows()):
    if True in doc:
        doc["on"] = doc.pop(True)
    workflows[f"README.md workflow {i + 1}"] = doc
c.check(sum(1 for n in workflows if n.startswith("README")) >= 2, "the README shows the action's and the sharded workflow")

action_inputs = set(yaml.safe_load(open(os.path.join(SOURCE_DIR, "action.yml")))["inputs"])
for name, doc in workflows.items():
    problems = []
    if not (isinstance(doc, dict) and "on" in doc and isinstance(doc.get("jobs"), dict)):
        c.check(False, f"{name}: a workflow with on and jobs", str(doc)[:500])
        continue
    for job_name, job in doc["jobs"].items():
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        problems += [f"{job_name} needs {n}, no such job" for n in needs if n not in doc["jobs"]]
        if "runs-on" not in job or not isinstance(job.get("steps"), list):
            problems.append(f"{job_name}: no runs-on or no steps")
            continue
        for step in job["steps"]:
            if ("uses" in step) == ("run" in step):
                problems.append(f"{job_name}: a step must either use an action or run: {step}")
            uses = step.get("uses", "")
            if uses and not uses.startswith("./") and not re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w./-]+)?@v[0-9X]+", uses):
                problems.append(f"{job_name}: {uses} is not pinned to a major version")
            if uses == "./" or uses.startswith("OWNER/btfslim@"):
                problems += [f"{job_name}: the action has no input {k}" for k in step.get("with", {})
                             if k not in action_inputs]
    c.equal(problems, [], f"{name}: jobs, needs, steps, pinned actions, the action's inputs")

# The README's budget job uses the action.
readme = [d for n, d in workflows.items() if n.startswith("README")]
c.check(any(s.get("uses", "").startswith("OWNER/btfslim@") and s.get("with", {}).get("command") == "budget"
            for d in readme for j in d["jobs"].values() for s in j["steps"]), "README: budget through the action")


def sharded(doc):
    """The matrix job whose step runs minimize through the action with --shard, and the job gathering it."""
    for job_name, job in doc["jobs"].items():
        for step in job.get("steps", []):
            w = step.get("with", {})
            if w.get("command") == "minimize" and "--shard" in w.get("args", ""):
                gather = [n for n, j in doc["jobs"].items() if job_name in ([j["needs"]] if isinstance(
                    j.get("needs"), str) else j.get("needs", []))]
                return job_name, job, step, gather
    return None


for name, doc in workflows.items():
    found = sharded(doc)
    if not found:
        continue
    job_name, job, step, gather = found
    c.check("shard" in job.get("strategy", {}).get("matrix", {}), f"{name}: {job_name} has a shard matrix")
    c.check(job.get("strategy", {}).get("fail-fast") is False, f"{name}: one failed shard does not cancel the rest")
    c.check(len(gather) == 1, f"{name}: one job gathers the shards", str(gather))
    if gather:
        dl = [s for s in doc["jobs"][gather[0]]["steps"] if s.get("uses", "").startswith("actions/download-artifact@")]
        c.check(dl and dl[0]["with"].get("merge-multiple") is True, f"{name}: the gathering job merges every shard")
        up = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
        c.check(up and "${{ matrix.shard }}" in up[0]["with"]["name"], f"{name}: each shard uploads its own artifact")

# The repository's sharded workflow, run here for several N over a btfhub-like tree of real kernels.
doc = workflows["btfhub-minimize.yml"]
job_name, job, step, gather = sharded(doc)
plan = [s for s in doc["jobs"]["objects"]["steps"] if s.get("id") == "plan"][0]

hub = os.path.join(root, "btfhub-archive")
objects = os.path.join(root, "objects")


def place(rel, data_from=None, data=None):
    path = os.path.join(hub, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if data_from:
        shutil.copy(data_from, path)
    else:
        open(path, "wb").write(data)


running = open("/sys/kernel/btf/vmlinux", "rb").read()
place("ubuntu/22.04/x86_64/running.btf", data=running)
place("ubuntu/20.04/x86_64/running-copy.btf", data=running)
stage = os.path.join(root, "stage")
os.makedirs(stage)
open(os.path.join(stage, "5.4.0-archived.btf"), "wb").write(running)
os.makedirs(os.path.join(hub, "centos/8/x86_64"))
subprocess.run(["tar", "-C", stage, "-cJf", os.path.join(hub, "centos/8/x86_64/5.4.0-archived.btf.tar.xz"),
                "5.4.0-archived.btf"], check=True)
other = os.path.expanduser("~/.cache/btfslim-test/kernel-6.1/vmlinux")
if os.path.exists(other):
    place("debian/12/x86_64/6.1.0.o", data_from=other)
else:
    print("note: no second kernel (scripts/fetch-test-kernel.sh): the tree has only the running kernel's BTF")
for k in ("moved", "missing", "errors"):  # on these the programs are poisoned: --skip-poisoned writes none
    place(f"fedora/38/x86_64/4.0-{k}.o", data_from=os.path.join(TESTS_BUILD, f"core_target_{k}.o"))
os.makedirs(objects)
trace = [n for n in sorted(os.listdir(TESTS_BUILD)) if n.startswith("trace_") and n.endswith(".bpf.o")]
if not trace:
    print("no trace_*.bpf.o (no running kernel BTF at configure time): the shards minimize for core_fields")
for n in trace[:4] or ["core_fields.bpf.o"]:
    shutil.copy(os.path.join(TESTS_BUILD, n), objects)
sources = sum(len(f) for _, _, f in os.walk(hub))

bindir = os.path.join(root, "bin")
os.makedirs(bindir)
os.symlink(BTFSLIM, os.path.join(bindir, "btfslim"))


def make_job(tag):
    """One runner's job: the tree and objects as the checkout and download steps leave them."""
    j = Job(os.path.join(root, tag), os.path.join(root, "cache"), {"PATH": bindir + ":" + os.environ["PATH"]})
    os.symlink(hub, os.path.join(j.workspace, "btfhub-archive"))
    os.symlink(objects, os.path.join(j.workspace, "objects"))
    return j


def shard_job(tag, shard_step, ctx):
    """A workflow's minimize step through the action (with the btfslim under test installed)."""
    j = make_job(tag)
    with_ = {k: substitute(v, ctx) for k, v in shard_step["with"].items()}
    with_["version"] = "installed"
    r = run_action(j, with_)
    return j, r


def gather_shards(tag, shard_step, contexts):
    """Every shard's job, then what the gathering job's download (merge-multiple) makes of their outputs."""
    gathered = os.path.join(root, f"gathered-{tag}")
    os.makedirs(gathered)
    for i, ctx in enumerate(contexts, 1):
        j, r = shard_job(f"{tag}-shard{i}", shard_step, ctx)
        c.equal(r.status, 0, f"{tag}: shard {i} succeeds")
        shard_min = os.path.join(j.workspace, "min")
        for d, _, fs in os.walk(shard_min):
            for f in fs:
                rel = os.path.relpath(os.path.join(d, f), shard_min)
                dest = os.path.join(gathered, rel)
                c.check(not os.path.exists(dest), f"{tag}: {rel} from one shard only")
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.copy(os.path.join(d, f), dest)
    got_files = sorted(os.path.relpath(os.path.join(d, f), gathered) for d, _, fs in os.walk(gathered) for f in fs)
    c.equal(got_files, want_files, f"{tag}: the gathered shards hold the unsharded run's files")
    same = all(filecmp.cmp(os.path.join(gathered, f), os.path.join(want_dir, f), shallow=False)
               for f in want_files if f in got_files)
    c.check(same, f"{tag}: byte-identical to the unsharded run")


unsharded = subprocess.run([BTFSLIM, "minimize", "--btf", "btfhub-archive", "-o", "min", "--skip-poisoned",
                            *[os.path.join("objects", o) for o in sorted(os.listdir(objects))]],
                           cwd=make_job("unsharded").workspace, capture_output=True, text=True)
want_dir = os.path.join(root, "unsharded", "workspace", "min")
c.equal(unsharded.returncode, 0, "the unsharded run succeeds")
want_files = sorted(os.path.relpath(os.path.join(d, f), want_dir) for d, _, fs in os.walk(want_dir) for f in fs)
c.check(len(want_files) >= 3, f"the unsharded run writes several kernels ({len(want_files)} of {sources} sources)",
        unsharded.stdout + unsharded.stderr)

for n in (1, 2, 3, 5):
    # The plan step's matrix for N.
    out = subprocess.run(["bash", "-eo", "pipefail", "-c",
                          substitute(plan["run"], {"inputs": {"shards": n}})], capture_output=True, text=True,
                         env=dict(os.environ, GITHUB_OUTPUT=os.path.join(root, f"plan-{n}")))
    listed = open(os.path.join(root, f"plan-{n}")).read().strip()
    c.equal(listed, "shards=" + str(list(range(1, n + 1))).replace(" ", ""), f"N={n}: the plan step's matrix")
    gather_shards(f"N={n}", step, [{"matrix": {"shard": i}, "inputs": {"shards": n}} for i in range(1, n + 1)])

# The README's workflow, whose matrix lists the shards.
for name, doc in workflows.items():
    found = sharded(doc)
    if name.startswith("README") and found:
        shards = found[1]["strategy"]["matrix"]["shard"]
        c.check(isinstance(shards, list) and f"/{len(shards)} " in found[2]["with"]["args"],
                f"{name}: --shard I/N with N the matrix's length", str(shards))
        gather_shards(name.replace(" ", "-"), found[2], [{"matrix": {"shard": i}} for i in shards])

shutil.rmtree(root, ignore_errors=True)
sys.exit(c.finish())
