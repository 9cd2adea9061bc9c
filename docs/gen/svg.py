"""A few SVG shapes, enough for the concept diagrams: boxes, labels, arrows; deterministic output."""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape

FONT = "font-family='ui-monospace, SFMono-Regular, Menlo, Consolas, monospace'"
COLORS = {
    "commit": "#4caf50", "deltacommit": "#8bc34a", "replacecommit": "#009688", "compaction": "#7e57c2",
    "clean": "#9e9e9e", "rollback": "#e57373", "pending": "#ffb74d", "base": "#64b5f6", "log": "#ffd54f",
    "read": "#1565c0", "muted": "#eeeeee", "text": "#212121",
}


@dataclass
class Svg:
    width: int
    height: int
    title: str
    parts: list[str] = field(default_factory=list)

    def box(self, x: float, y: float, w: float, h: float, fill: str, label: str = "", stroke: str = "#424242",
            dashed: bool = False, size: int = 12) -> None:
        dash = " stroke-dasharray='5,3'" if dashed else ""
        self.parts.append(f"<rect x='{x:g}' y='{y:g}' width='{w:g}' height='{h:g}' rx='4' fill='{fill}' "
                          f"stroke='{stroke}'{dash}/>")
        if label:
            self.text(x + w / 2, y + h / 2 + size / 3, label, size=size, anchor="middle")

    def text(self, x: float, y: float, label: str, size: int = 12, anchor: str = "start", bold: bool = False,
             color: str = COLORS["text"]) -> None:
        weight = " font-weight='bold'" if bold else ""
        self.parts.append(f"<text x='{x:g}' y='{y:g}' font-size='{size}' text-anchor='{anchor}' fill='{color}' "
                          f"{FONT}{weight}>{escape(label)}</text>")

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str = "#616161", arrow: bool = False,
             width: float = 1.5) -> None:
        head = " marker-end='url(#arrow)'" if arrow else ""
        self.parts.append(f"<line x1='{x1:g}' y1='{y1:g}' x2='{x2:g}' y2='{y2:g}' stroke='{color}' "
                          f"stroke-width='{width:g}'{head}/>")

    def render(self) -> str:
        defs = ("<defs><marker id='arrow' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='7' markerHeight='7' "
                "orient='auto-start-reverse'><path d='M 0 0 L 10 5 L 0 10 z' fill='#616161'/></marker></defs>")
        body = "\n".join(self.parts)
        return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{self.width}' height='{self.height}' "
                f"viewBox='0 0 {self.width} {self.height}' role='img' aria-label='{escape(self.title)}'>\n"
                f"<title>{escape(self.title)}</title>\n{defs}\n"
                f"<rect width='100%' height='100%' fill='white'/>\n{body}\n</svg>\n")
