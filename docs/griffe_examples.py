"""Griffe extension: reads the project's docstring sections as the Google style does.

keras-dml's docstrings (CONTRIBUTING.md) write an `Examples:` section's doctest lines at the
section's own indentation; the Google parser expects them one level deeper. This extension
indents them before parsing, so the API reference shows them as code, not as text.
"""

import re

import griffe

SECTION = re.compile(r"^(\s*)[A-Z][A-Za-z ]*:\s*$")


def indent_examples(text):
    """`text` with the lines of each `Examples:` section indented under its header."""
    lines, out, indent = text.split("\n"), [], None
    for line in lines:
        header = SECTION.match(line)
        if header:
            indent = header.group(1) if line.strip() == "Examples:" else None
            out.append(line)
            continue
        if indent is not None and line.strip() and not line.startswith(indent + " "):
            out.append(indent + "    " + line[len(indent) :])
        else:
            out.append(line)
    return "\n".join(out)


class IndentedExamples(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = indent_examples(obj.docstring.value)
