"""Figure conventions shared by every module: a caption line with device and command, labels
that do not overlap, legends in numeric order, and a description of each saved figure
(axis labels, legend, overlapping labels) that tests/plots_check.sh reads from figures.json."""
import re
import textwrap

from matplotlib.text import Annotation

_CAPTION = {"text": ""}
DESCRIPTIONS = {}  # figure name -> description, filled by save()


def set_caption(doc, extra=""):
    """The caption for every figure made from `doc` from now on: device, command, commit."""
    meta = doc.get("meta", {})
    command = meta.get("command") or " ".join(meta.get("argv", [])) or "?"
    if len(command) > 110:
        command = command[:107] + "..."
    sha = str(meta.get("git", {}).get("sha", "?"))[:12]
    text = f"{doc['device']['name']} | {command} | commit {sha}"
    if meta.get("synthetic"):
        text = "SYNTHETIC TEST DATA | " + text
    _CAPTION["text"] = text + (f" | {extra}" if extra else "")


def caption_text():
    return _CAPTION["text"]


def numeric_key(value):
    """Sort key that orders numbers as numbers (16 < 128 < 1024) and other values after them as
    text; "64 blocks" sorts by its leading number."""
    if isinstance(value, bool):
        return (1, 0.0, str(value))
    if isinstance(value, (int, float)):
        return (0, float(value), "")
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)", str(value))
    if m:
        return (0, float(m.group(1)), str(value))
    return (1, 0.0, str(value))


def _overlap(a, b, pad=1.0):
    return a.x0 < b.x1 - pad and b.x0 < a.x1 - pad and a.y0 < b.y1 - pad and b.y0 < a.y1 - pad


def _shift(t, dy, fig):
    """Moves text t by dy display pixels vertically (works for log axes and offset annotations)."""
    if isinstance(t, Annotation) and t.anncoords == "offset points":
        x, y = t.xyann
        t.xyann = (x, y + dy * 72.0 / fig.dpi)
    else:
        x_disp, y_disp = t.get_transform().transform(t.get_position())
        t.set_position(t.get_transform().inverted().transform((x_disp, y_disp + dy)))


def declutter(ax, texts, max_steps=30):
    """Moves texts vertically until none overlaps one placed before it or the title, staying in
    the figure: tries up and down in growing steps of a third of the text's height. `texts` in
    priority order: earlier ones stay put."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    placed = [ax.title.get_window_extent(renderer)] if ax.title.get_text() else []
    limit = fig.bbox
    for t in texts:
        box = t.get_window_extent(renderer)
        if any(_overlap(box, p) for p in placed):
            step = max(2.0, box.height / 3)
            moved = 0.0
            for k in range(1, max_steps + 1):
                for dy in (k * step, -k * step):
                    _shift(t, dy - moved, fig)
                    moved = dy
                    b = t.get_window_extent(renderer)
                    if b.y0 >= limit.y0 and b.y1 <= limit.y1 and not any(_overlap(b, p) for p in placed):
                        break
                else:
                    continue
                break
        placed.append(t.get_window_extent(renderer))


def overlapping_labels(fig):
    """Pairs of text labels (axes texts and annotations) whose boxes overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        texts = [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
        if ax.title.get_text():
            texts.append(ax.title)
        boxes = [t.get_window_extent(renderer) for t in texts]
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                if _overlap(boxes[i], boxes[j]):
                    out.append([texts[i].get_text(), texts[j].get_text()])
    return out


def describe(fig):
    axes = []
    for ax in fig.axes:
        legend = ax.get_legend()
        axes.append({"xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                     "legend": [t.get_text() for t in legend.get_texts()] if legend else []})
    return {"axes": axes, "caption": caption_text(), "overlapping_labels": overlapping_labels(fig)}


def save(fig, stem, name=None):
    """Adds the caption, records the description, writes STEM.png and STEM.svg."""
    import matplotlib.pyplot as plt

    lines = 0
    if caption_text():
        # About 21 characters of 6-point text per inch of figure width.
        wrapped = textwrap.fill(caption_text(), width=int(fig.get_figwidth() * 21))
        lines = wrapped.count("\n") + 1
        fig.text(0.01, 0.005, wrapped, fontsize=6, color="0.35", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.012 + lines * 0.02 / max(1.0, fig.get_figheight() / 5), 1, 1))
    name = name or stem.rsplit("/", 1)[-1]
    DESCRIPTIONS[name] = describe(fig)
    files = [f"{stem}.png", f"{stem}.svg"]
    for f in files:
        fig.savefig(f, dpi=130)
    plt.close(fig)
    return files


def run_figures(figures, doc, out_dir, note):
    """Draws each figure function of `figures` (doc, out_dir, note) -> written files or None, and
    returns {figure name: files} for those that were drawn (the name is the files' stem)."""
    made = {}
    for figure in figures:
        files = figure(doc, out_dir, note)
        if files:
            made[files[0].rsplit("/", 1)[-1].rsplit(".", 1)[0]] = files
    return made
