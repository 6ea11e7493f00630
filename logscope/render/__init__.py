"""Renderers: a ParsedLog into text, JSON or Markdown."""
