"""The calculator agent as a Python program: plain urllib against an OpenAI-compatible server.

agentic runs it as a command agent (examples/agents/README.md): the model's base URL, key and name,
the task and the deadline come in environment variables, the tool definitions in AGENTIC_TOOLS
(JSON) when the env lists tools, and the final answer goes out as JSON on the last line. A command
agent runs its tools itself, so the calculator is here too: a small evaluator over Python's ast
that computes what the built-in calculator computes (whole numbers and fractions exact, decimals
printed with six significant digits) and runs nothing else.
"""

import ast
import json
import math
import os
import sys
import time
import urllib.request
from fractions import Fraction

# The built-in calculator's definition (`agentic plugins calculator`), for a run that lists no tools.
CALCULATOR = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression: + - * / // % ^, parentheses, sqrt, abs, round, min, max, log, exp, sin, pi, e.",
        "parameters": {
            "type": "object",
            "properties": {
                "expression": {"type": "string", "description": "The expression to evaluate, e.g. (12 + 30) * 3 / 7"}
            },
            "required": ["expression"],
        },
    },
}

MAX_TURNS = 3
MAX_EXPRESSION = 1000
# 2 ** MAX_EXPONENT is already far beyond any answer
MAX_EXPONENT = 4096

BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}

FUNCTIONS = {
    "sqrt": lambda x: exact_root(x),
    "abs": abs,
    "floor": math.floor,
    "ceil": math.ceil,
    "round": lambda x, digits=0: round_half_away(x, digits),
    "min": min,
    "max": max,
    "exp": lambda x: math.exp(x),
    "ln": lambda x: math.log(x),
    "log": lambda x, base=None: math.log(x) if base is None else math.log(x) / math.log(base),
    "log10": lambda x: math.log10(x),
    "log2": lambda x: math.log2(x),
    "sin": lambda x: math.sin(x),
    "cos": lambda x: math.cos(x),
    "tan": lambda x: math.tan(x),
}

CONSTANTS = {"pi": math.pi, "e": math.e}


def exact_root(x):
    if x < 0:
        raise ValueError("sqrt of a negative number")
    if isinstance(x, Fraction):
        n, d = math.isqrt(x.numerator), math.isqrt(x.denominator)
        if n * n == x.numerator and d * d == x.denominator:
            return Fraction(n, d)
    return math.sqrt(x)


def round_half_away(x, digits):
    scale = 10 ** int(digits)
    rounded = math.copysign(math.floor(abs(x) * scale + 0.5), x) / scale
    return Fraction(int(rounded)) if digits <= 0 and isinstance(x, Fraction) else rounded


def power(base, exponent):
    if isinstance(exponent, Fraction) and exponent.denominator == 1 and abs(exponent) > MAX_EXPONENT:
        raise ValueError("the result is too large")
    result = base**exponent
    if isinstance(result, complex):
        raise ValueError("a negative number has no real root of that order")
    return result


def value(node):
    """The value of an expression node: Fractions while exact, floats once a decimal enters."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return Fraction(node.value) if isinstance(node.value, int) else node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return power(value(node.left), value(node.right))
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        return BINARY[type(node.op)](value(node.left), value(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = value(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.Name) and node.id in CONSTANTS:
        return CONSTANTS[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS and not node.keywords:
        result = FUNCTIONS[node.func.id](*[value(arg) for arg in node.args])
        return Fraction(result) if isinstance(result, int) else result
    raise ValueError(f"unsupported: {ast.unparse(node)[:40]}")


def calculate(expression):
    """The calculator's reply: the result as the built-in one prints it, or "Error: ..."."""
    if len(expression) > MAX_EXPRESSION:
        return f"Error: the expression is longer than {MAX_EXPRESSION} characters"
    try:
        # ^ is a power here, as in the built-in calculator (Python's ^ is xor, with another precedence)
        result = value(ast.parse(expression.strip().replace("^", "**"), mode="eval").body)
    except ZeroDivisionError:
        return "Error: division by zero"
    except (ValueError, TypeError, OverflowError, SyntaxError, RecursionError) as error:
        return f"Error: {error}"
    if not math.isfinite(result):
        return "Error: the result is too large" if not math.isnan(result) else "Error: the result is not a number"
    if isinstance(result, Fraction):
        return str(result.numerator) if result.denominator == 1 else f"{result.numerator}/{result.denominator}"
    return f"{result:g}"


def chat(messages, tools, deadline):
    body = {"model": os.environ["AGENTIC_MODEL"], "messages": messages, "tools": tools}
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
    )
    with urllib.request.urlopen(request, timeout=max(deadline - time.time(), 1)) as response:
        return json.load(response)["choices"][0]["message"]


def main():
    task = json.loads(os.environ["AGENTIC_TASK"])
    deadline = int(os.environ["AGENTIC_DEADLINE_MS"]) / 1000
    tools = json.loads(os.environ.get("AGENTIC_TOOLS") or "[]") or [CALCULATOR]
    messages = [{"role": "system", "content": "Use the calculator."}, {"role": "user", "content": task["question"]}]
    answer = ""
    for _ in range(MAX_TURNS):
        message = chat(messages, tools, deadline)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            answer = message.get("content") or ""
            break
        for call in calls:
            args = json.loads(call["function"]["arguments"])
            output = calculate(str(args.get("expression", ""))) if call["function"]["name"] == "calculator" else "Error: no such tool"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    print(json.dumps({"answer": answer}))


if __name__ == "__main__":
    sys.exit(main())
