# Runs solution.py, then each test in tests.json on its own in the solution's namespace, and
# prints one line: the marker followed by {"passed": [bool, ...], "error": first failure or null}.
import json
import os
import sys

with open("tests.json", encoding="utf-8") as f:
    spec = json.load(f)
os.remove("tests.json")  # the solution may not read the tests (or the marker)
with open("solution.py", encoding="utf-8") as f:
    solution = f.read()


def describe(error):
    text = str(error)
    return type(error).__name__ + (": " + text if text else "")


namespace = {"__name__": "__main__"}
passed = []
first_error = None
try:
    exec(compile(solution, "solution.py", "exec"), namespace)
except BaseException as error:  # a solution that does not even load fails every test
    first_error = "the code failed to run: " + describe(error)
for i, test in enumerate(spec["tests"]):
    if first_error is not None and first_error.startswith("the code failed"):
        passed.append(False)
        continue
    try:
        exec(compile(test, "test_%d" % (i + 1), "exec"), namespace)
        passed.append(True)
    except BaseException as error:
        passed.append(False)
        if first_error is None:
            first_error = "test %d: %s" % (i + 1, describe(error))
sys.stdout.flush()
print("\n" + spec["marker"] + json.dumps({"passed": passed, "error": first_error}), flush=True)
