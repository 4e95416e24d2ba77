"""One seat of a two-player game as a Python program: plain urllib against an OpenAI-compatible server.

agentic runs it at each of its seat's turns (seat_agent: {command: [python3, examples/agents/python_game_seat.py]},
docs/multi_agent.md#an-outside-agent-in-a-seat): the model's base URL, key and name, the seat's rules
(AGENTIC_INSTRUCTION) and what it sees (AGENTIC_OBSERVATION) come in environment variables, and the
move goes out as JSON on the last line. It asks as openai_game_seat.ts does: the rules as the system
message, the observation as the user's, the reply as the move.
"""

import json
import os
import time
import urllib.request


def main():
    deadline = int(os.environ["AGENTIC_DEADLINE_MS"]) / 1000
    body = {
        "model": os.environ["AGENTIC_MODEL"],
        "messages": [
            {"role": "system", "content": os.environ["AGENTIC_INSTRUCTION"]},
            {"role": "user", "content": os.environ["AGENTIC_OBSERVATION"]},
        ],
    }
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
    )
    with urllib.request.urlopen(request, timeout=max(1.0, deadline - time.time())) as response:
        reply = json.loads(response.read())
    print(json.dumps({"action": reply["choices"][0]["message"]["content"] or ""}))


if __name__ == "__main__":
    main()
