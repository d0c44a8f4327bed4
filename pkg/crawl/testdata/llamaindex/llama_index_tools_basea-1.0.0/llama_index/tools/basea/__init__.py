from llama_index.tools.basea.base import BaseASpec

__all__ = ["BaseASpec"]
