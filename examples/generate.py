"""Write the synthetic example cassettes under scenarios/cassettes/ (deterministic).

    python examples/generate.py [OUTPUT_DIR]

Four agents of the kind costsim is for, one folder each: a REPL coding agent, a multi-agent
orchestrator, a browser-automation MCP session and an assistant making light side calls.
Every file says it is synthetic. Usage in the responses comes from costsim's own metering, so
the examples are self-consistent: their recorded prompts are what costsim estimates. Running
the script twice writes byte-identical files (seeded generators, fixed dates).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["agents", "expected_calls", "main"]

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "scenarios" / "cassettes"


def agents() -> dict[str, Callable[[Path], None]]:
    """Agent folder name -> its generator (each writes its cassettes into the folder)."""
    from examples import browser_mcp, coding_agent, orchestrator, side_calls

    return {
        "browser_mcp": browser_mcp.generate,
        "coding_agent": coding_agent.generate,
        "orchestrator": orchestrator.generate,
        "side_calls": side_calls.generate,
    }


def expected_calls() -> dict[str, int]:
    """Cassette path (relative to the output folder) -> the LLM calls it holds."""
    from examples import browser_mcp, coding_agent, orchestrator, side_calls

    return {
        "browser_mcp/checkout_session.yaml": browser_mcp.CALLS,
        "coding_agent/retry_bugfix_session.yaml": coding_agent.CALLS,
        "orchestrator/rate_limiting_project.yaml": orchestrator.CALLS,
        "side_calls/assistant_with_side_calls.yaml": side_calls.CALLS,
    }


def main(output: Path = OUTPUT) -> None:
    for name, generate in agents().items():
        generate(output / name)
        print(f"wrote {output / name}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT)
