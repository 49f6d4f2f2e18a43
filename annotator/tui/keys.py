"""The annotation screen's keys, in one table: bindings, footer, help screen and palette read it."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True, slots=True)
class Key:
    """One key of the annotation screen."""

    keys: str
    """Textual key names, comma-separated."""
    shown: str
    """How the help screen writes the keys."""
    action: str
    label: str
    """Short footer label."""
    help: str
    """One sentence for the help screen and the command palette."""
    footer: bool = True

    def actions(self) -> list[tuple[str, str]]:
        """(key, action) of each key: an action naming ``{key}`` is its key's own (the digits
        of a grade), any other is shared by all of its keys."""
        if "{key}" not in self.action:
            return [(self.keys, self.action)]
        return [(key, self.action.format(key=key)) for key in self.keys.split(",")]


KEYS: tuple[Key, ...] = (
    # Footer order: a narrow terminal shows the first ones (the decisions, the screens, help
    # and quit); navigation and comments follow (always bound, and listed in the help).
    Key("a", "a", "accept", "Accept", "Accept the judge's verdict on the selected chunk, move on."),
    Key("f,x", "f / x", "flip", "Flip", "Flip the judge's verdict (useful <-> noise), move on."),
    Key("1", "1", "set(1)", "Useful", "Set the chunk useful yourself (the way to answer a blind "
        "chunk); on a graded session, grade 1."),
    Key("0", "0", "set(0)", "Noise", "Set the chunk noise yourself (the way to answer a blind "
        "chunk); on a graded session, grade 0."),
    Key("2,3,4,5,6,7,8,9", "2 to 9", "set({key})", "Grade",
        "On a graded session: that grade (TREC's 0-3: 0 irrelevant, 1 related, 2 highly "
        "relevant, 3 perfectly relevant), read through the session's threshold.", footer=False),
    Key("u,backspace", "u / backspace", "undo", "Undo",
        "Undo your last decision, again and again, across goldens."),
    Key("g", "g", "queue", "Queue", "Every golden in a table, with filters; enter jumps to one."),
    Key("s", "s", "stats", "Stats", "Agreement statistics and CP under both label sets."),
    Key("i", "i", "guidelines", "Guidelines",
        "The team's guidelines in force (annotator guidelines SESSION set FILE.md); each label "
        "records their version.", footer=False),
    Key("question_mark", "?", "help", "Help",
        "This help: every key, and what P@k, CP and the pass mark mean."),
    Key("q", "q", "app.quit", "Quit", "Quit. Nothing to save: every decision is already on disk."),
    Key("j,down", "j / down", "move(1)", "Down", "Select the next chunk.", footer=False),
    Key("k,up", "k / up", "move(-1)", "Up", "Select the previous chunk.", footer=False),
    Key("right_square_bracket", "]", "next_golden", "Next",
        "Next golden (deciding a golden's last chunk goes to the next unfinished one)."),
    Key("left_square_bracket", "[", "previous_golden", "Prev", "Previous golden."),
    Key("o", "o", "unfold", "Unfold", "Unfold or fold the selected chunk's long text.", footer=False),
    Key("e", "e", "expand", "Expand",
        "Expand or shrink the golden's panel, to read a long question, reference or response.",
        footer=False),
    Key("c", "c", "comment", "Comment", "Write a comment on the selected chunk."),
    Key("m", "m", "answer('unsure')", "Unsure",
        "Unsure: you cannot tell. Needs a note; no verdict counts it until adjudicated.",
        footer=False),
    Key("d", "d", "answer('distractor')", "Distractor",
        "A distractor: noise that misleads (on topic, plausible, wrong for this question). "
        "Counts as noise; the report gives its rate.", footer=False),
    Key("r", "r", "reason_wrong", "Reason wrong",
        "Accept the judge's verdict but mark its reason wrong (a note is optional), move on.",
        footer=False),
)


ADJUDICATE_KEYS: tuple[Key, ...] = (
    Key("1", "1", "decide(1)", "Useful", "The gold label is useful; go to the next unsettled chunk."),
    Key("0", "0", "decide(0)", "Noise", "The gold label is noise; go to the next unsettled chunk."),
    Key("u,backspace", "u / backspace", "undo", "Undo", "Take back your last gold label."),
    Key("j,down,right_square_bracket", "j / down / ]", "move(1)", "Next", "The next disputed chunk."),
    Key("k,up,left_square_bracket", "k / up / [", "move(-1)", "Prev",
        "The previous disputed chunk."),
    Key("c", "c", "comment", "Note", "Write why you decided (kept with the gold label)."),
    Key("question_mark", "?", "help", "Help", "This help."),
    Key("q", "q", "app.quit", "Quit", "Quit. Nothing to save: every gold label is already on disk."),
)
"""The adjudication screen's keys (annotator annotate --adjudicate)."""


def bindings(keys: tuple[Key, ...] = KEYS) -> list[BindingType]:
    """A screen's bindings, from its key table."""
    return [Binding(key, action, k.label, show=k.footer, tooltip=k.help)
            for k in keys for key, action in k.actions()]
