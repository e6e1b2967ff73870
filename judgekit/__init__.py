"""judgekit: run and validate LLM-as-a-Judge studies."""

__version__ = "0.1.0"
