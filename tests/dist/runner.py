"""What a GitHub Actions runner does with this repository's action.yml and workflows, as far as the tests
need it: expressions in ${{ }}, `if:` conditions of the forms used here, each `run:` step as
`bash --noprofile --norc -eo pipefail FILE` with the GITHUB_* variables a runner sets (a fresh
GITHUB_OUTPUT per step, GITHUB_PATH prepended to PATH for later steps, one GITHUB_STEP_SUMMARY per step),
and actions/cache as a store of directories by key (restored before, saved at the end on a miss).
Nothing here knows what the action does: it runs the action's own steps."""

import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import yaml

SOURCE_DIR = os.environ.get("BTFSLIM_TEST_SOURCE_DIR_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class Failure(Exception):
    pass


class Checks:
    """Named checks that go on after a failure, and a summary at the end (exit status 1 if any failed)."""

    def __init__(self):
        self.failed = []
        self.passed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"ok: {what}", flush=True)
        else:
            self.failed.append(what)
            print(f"FAILED: {what}" + (f"\n{detail}" if detail else ""), flush=True)
        return ok

    def equal(self, got, want, what):
        return self.check(got == want, what, f"  got:  {got!r}\n  want: {want!r}")

    def finish(self):
        print(f"{self.passed} passed, {len(self.failed)} failed", flush=True)
        for f in self.failed:
            print(f"  failed: {f}")
        return 1 if self.failed else 0


def parse_outputs(path):
    """A GITHUB_OUTPUT file: NAME=VALUE lines, or NAME<<DELIM ... DELIM."""
    out = {}
    if not os.path.exists(path):
        return out
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1:j])
            i = j + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        i += 1
    return out


def evaluate(expr, context):
    """A ${{ }} expression: a dotted name (inputs.x, steps.id.outputs.y, matrix.shard, ...), a string
    literal, or A == B / A != B of those. Anything else is an error: a test must not pass on a guess."""
    expr = expr.strip()
    for op in ("!=", "=="):
        if op in expr:
            a, b = (evaluate(side, context) for side in expr.split(op, 1))
            return (a == b) if op == "==" else (a != b)
    if expr.startswith("'") and expr.endswith("'"):
        return expr[1:-1].replace("''", "'")
    if not re.fullmatch(r"[A-Za-z_][\w-]*(\.[\w-]+)*", expr):
        raise Failure(f"expression the test runner does not evaluate: {expr}")
    value = context
    for part in expr.split("."):
        if not isinstance(value, dict) or part not in value:
            if expr.startswith("steps."):
                return ""  # a step that did not run, or an output it did not set
            raise Failure(f"unknown name in expression: {expr}")
        value = value[part]
    return value


def substitute(text, context):
    if not isinstance(text, str):
        return text
    whole = EXPR.fullmatch(text.strip())
    if whole and text.count("${{") == 1:
        value = evaluate(whole.group(1), context)
        return value if not isinstance(value, bool) else str(value).lower()
    return EXPR.sub(lambda m: str(evaluate(m.group(1), context)), text)


class Job:
    """One job's runner: a workspace, RUNNER_TEMP, PATH additions, and a cache store shared between jobs."""

    def __init__(self, root, cache_store, env=None):
        self.root = root
        self.workspace = os.path.join(root, "workspace")
        self.temp = os.path.join(root, "runner-temp")
        os.makedirs(self.workspace, exist_ok=True)
        os.makedirs(self.temp, exist_ok=True)
        self.cache_store = cache_store
        self.path_additions = []
        self.pending_saves = []  # (key, path) of cache misses, saved when the job ends
        self.env = dict(env or {})
        self.log = []  # (step id, status, stdout, stderr, summary)
        self.count = 0

    def base_env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "INPUT_"))}
        env.update(self.env)
        env.update({
            "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": self.workspace, "RUNNER_TEMP": self.temp,
            "RUNNER_OS": "Linux", "GITHUB_SERVER_URL": "https://github.com",
        })
        env["PATH"] = ":".join(list(reversed(self.path_additions)) + [env.get("PATH", "/usr/bin:/bin")])
        return env

    def run_script(self, step_id, script, env_extra, working_directory=None):
        self.count += 1
        files = {name: os.path.join(self.temp, f"_{name}_{self.count}")
                 for name in ("GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_ENV")}
        for f in files.values():
            open(f, "w").close()
        script_file = os.path.join(self.temp, f"_step_{self.count}.sh")
        with open(script_file, "w") as f:
            f.write(script)
        env = self.base_env()
        env.update(files)
        env.update({k: str(v) for k, v in env_extra.items()})
        cwd = self.workspace if not working_directory else os.path.join(self.workspace, working_directory)
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script_file], cwd=cwd, env=env,
                           capture_output=True, text=True)
        self.path_additions += [l for l in open(files["GITHUB_PATH"]).read().split("\n") if l]
        summary = open(files["GITHUB_STEP_SUMMARY"], encoding="utf-8").read()
        outputs = parse_outputs(files["GITHUB_OUTPUT"])
        self.log.append((step_id, p.returncode, p.stdout, p.stderr, summary))
        return p.returncode, outputs, p.stdout, p.stderr, summary

    def cache_step(self, with_):
        key, path = with_["key"], with_["path"]
        stored = os.path.join(self.cache_store, key)
        if os.path.isdir(stored):
            shutil.rmtree(path, ignore_errors=True)
            shutil.copytree(stored, path, symlinks=True)
            return "true"
        self.pending_saves.append((key, path))
        return "false"

    def end(self):
        for key, path in self.pending_saves:
            stored = os.path.join(self.cache_store, key)
            if os.path.isdir(path) and not os.path.exists(stored):
                shutil.copytree(path, stored, symlinks=True)
        self.pending_saves = []


class ActionResult:
    def __init__(self):
        self.status = 0
        self.steps = {}  # id -> (status, outputs, stdout, stderr, summary)
        self.stdout = ""
        self.stderr = ""
        self.summary = ""
        self.outputs = {}


def run_action(job, inputs, action_dir=SOURCE_DIR, github=None):
    """Run action.yml's steps as a composite action: stop at the first failing step; its status is the
    action's."""
    action = yaml.safe_load(open(os.path.join(action_dir, "action.yml")))
    if action["runs"]["using"] != "composite":
        raise Failure("action.yml is not a composite action")
    values = {name: str(spec.get("default", "")) for name, spec in action.get("inputs", {}).items()}
    for name, value in inputs.items():
        if name not in values:
            raise Failure(f"action.yml has no input {name}")
        values[name] = str(value)
    context = {
        "inputs": values,
        "steps": {},
        "runner": {"temp": job.temp, "os": "Linux"},
        "github": dict({"server_url": "https://github.com", "action_repository": "OWNER/btfslim",
                        "workspace": job.workspace}, **(github or {})),
    }
    result = ActionResult()
    for n, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", f"step{n}")
        if "if" in step and not evaluate(step["if"], context):
            continue
        if "uses" in step:
            if not step["uses"].startswith("actions/cache@"):
                raise Failure(f"step {sid}: the test runner does not emulate {step['uses']}")
            hit = job.cache_step({k: substitute(v, context) for k, v in step.get("with", {}).items()})
            context["steps"][sid] = {"outputs": {"cache-hit": hit}}
            continue
        env = {k: substitute(v, context) for k, v in (step.get("env") or {}).items()}
        env["GITHUB_ACTION_PATH"] = action_dir
        if step.get("shell") != "bash":
            raise Failure(f"step {sid}: shell {step.get('shell')}, not bash")
        wd = substitute(step.get("working-directory"), context)
        status, outputs, out, err, summary = job.run_script(sid, step["run"], env, wd)
        context["steps"][sid] = {"outputs": outputs}
        result.steps[sid] = (status, outputs, out, err, summary)
        result.stdout += out
        result.stderr += err
        result.summary += summary
        if status != 0:
            result.status = status
            break
    result.outputs = {name: substitute(spec["value"], context) if "value" in spec else ""
                      for name, spec in action.get("outputs", {}).items()}
    return result


def temp_dir(prefix):
    """A directory of the test's own, removed when the test exits, whether it passed, failed or stopped on
    an error (a SIGTERM, as meson sends on a timeout, exits too)."""
    path = tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TMPDIR", "/tmp"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    return path
