"""A scripted model of the OpenAI Agents SDK's own `Model` interface: each call answers with the next turn of a
script (tool calls, or a final message), so agents run offline, deterministically, through the real Runner."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from agents import Model, ModelResponse, Usage
from agents.items import TResponseStreamEvent
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

Turn = str | list[tuple[str, dict[str, Any]]]
"""A final message, or the tool calls `(tool name, arguments)` of one model turn."""


class ScriptedModel(Model):
    """Plays `turns` in order; `inputs` records what the model was given each time."""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = list(turns)
        self.inputs: list[Any] = []
        self._calls = 0

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        turn = self.turns.pop(0)
        output: list[Any]
        if isinstance(turn, str):
            text = ResponseOutputText(text=turn, type="output_text", annotations=[])
            output = [
                ResponseOutputMessage(
                    id=f"msg_{len(self.inputs)}", content=[text], role="assistant", status="completed", type="message"
                )
            ]
        else:
            output = []
            for name, arguments in turn:
                self._calls += 1
                output.append(
                    ResponseFunctionToolCall(
                        id=f"fc_{self._calls}",
                        call_id=f"call_{self._calls}",
                        name=name,
                        arguments=json.dumps(arguments),
                        type="function_call",
                        status="completed",
                    )
                )
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("the scripted model answers get_response only")
