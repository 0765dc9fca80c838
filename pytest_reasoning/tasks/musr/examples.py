"""The solved example of the ``1shot-cot+`` style: one hand-written story per domain with its
reasoning, as the paper does (its one-shot examples are fixed stories with hand-written
reasoning, the same for every item).

Hand-written on purpose: an example drawn from the generator would be told in the very
templates of the story to solve, and would teach template lookup ("'stood at X's elbow'
means saw") instead of the reasoning. These stories share no wording with the template
library (tested), use a weapon, a setting and jobs the generator never draws, and their
reasoning cites every sentence it uses, checked by ``reasoning.check``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .reasoning import Step, render

__all__ = ["Solved", "solved"]


@dataclass(frozen=True)
class Solved:
    story: str
    question: str
    choices: tuple[str, ...]
    steps: tuple[Step, ...]
    answer: int  # 1-based

    @property
    def prompt(self) -> str:
        options = "\n".join(f"{n} - {c}" for n, c in enumerate(self.choices, 1))
        reasoning = "\n".join(render(self.steps))
        return (
            f"Here is a solved example.\n\n{self.story}\n\n{self.question}\n\nPick one of the "
            f"following choices:\n{options}\n\nReasoning:\n{reasoning}\nANSWER: {self.answer}"
            "\n\nNow the story to solve."
        )


def _s(*quotes: str) -> tuple[tuple[str, str | int], ...]:
    return tuple(("story", q) for q in quotes)


def _n(*steps: int) -> tuple[tuple[str, str | int], ...]:
    return tuple(("step", n) for n in steps)


MURDER = Solved(
    story=(
        "Walter Pryce, who sold rare books from a narrow shop on Quay Lane, was found slumped "
        "over his desk on Thursday morning, poisoned with digitalis. The coroner put the time "
        "of death at around 10 pm the evening before. By lunchtime Detective Amara Quist had "
        "two names: Walter's niece Irene, and Tobias, his partner in the shop until last year."
        "\n\n"
        "Irene met the detective in the staff room of St Bride's hospice, where she has worked "
        "nights for six years. On every shift she sets out the heart patients' tablets and "
        "signs for each dose of digoxin she gives. The week before, Walter had discovered that "
        "Irene was signing his name on cheques drawn from the shop's account, and he had told "
        "her he would take the statements to the bank on Friday. Irene owns the spare key to "
        "the shop. A taxi driver remembered dropping her on Quay Lane at half past nine on "
        "Wednesday evening, and her phone shows no calls or messages between nine and eleven. "
        "A neighbour mentioned that Irene had lately taken to wearing a red wig to the market."
        "\n\n"
        "Tobias was at home among his bows and arrow-making tools. He has shot for the county "
        "archery team for twenty years and teaches beginners on Sundays. When Walter bought him "
        "out last spring, Tobias lost nearly all his savings, and in March he told a pub full "
        "of people that Walter had it coming. The shop's neighbour saw Tobias rattling the "
        "back door handle at about ten o'clock on Wednesday night, and he admits he was alone "
        "all evening. He also burns his post unopened in the garden stove, which the neighbours "
        "find odd."
    ),
    question="Who is the most likely murderer?",
    choices=("Tobias", "Irene"),
    steps=(
        Step(_s("where she has worked nights for six years",
                "On every shift she sets out the heart patients' tablets and signs for each dose "
                "of digoxin she gives"),
             "Digoxin is the heart drug made from digitalis; a nurse who hands it out every "
             "night can lay hands on it.",
             "Irene had the means to poison Walter with digitalis"),
        Step(_s("Walter had discovered that Irene was signing his name on cheques drawn from the "
                "shop's account",
                "he had told her he would take the statements to the bank on Friday"),
             "Someone about to be reported for forgery may want the one who would report them "
             "silenced.",
             "Irene had a motive to kill Walter"),
        Step(_s("Irene owns the spare key to the shop",
                "A taxi driver remembered dropping her on Quay Lane at half past nine on "
                "Wednesday evening",
                "her phone shows no calls or messages between nine and eleven"),
             "Someone with a key who was outside the shop at half past nine, and unaccounted "
             "for until eleven, could have been inside at ten.",
             "Irene had the opportunity to kill Walter around 10 pm"),
        Step(_s("Irene had lately taken to wearing a red wig to the market"),
             "An odd habit is not evidence of a poisoning.",
             "Irene's wig is odd, but it proves no means, motive or opportunity"),
        Step(_n(1, 2, 3, 4), "A murderer needs the means, a motive and the opportunity.",
             "Irene has means, motive and opportunity"),
        Step(_s("He has shot for the county archery team for twenty years and teaches beginners "
                "on Sundays"),
             "An archer is at home with a bow, which is no help in poisoning anyone.",
             "Tobias's skill is with a bow, not with digitalis, so he had no proven means"),
        Step(_s("When Walter bought him out last spring, Tobias lost nearly all his savings",
                "in March he told a pub full of people that Walter had it coming"),
             "Someone ruined by another person, and bitter about it in public, may want "
             "revenge.",
             "Tobias had a motive to kill Walter"),
        Step(_s("The shop's neighbour saw Tobias rattling the back door handle at about ten "
                "o'clock on Wednesday night",
                "he admits he was alone all evening"),
             "Someone at the shop's door at ten, with nobody to vouch for him, could have got "
             "in.",
             "Tobias had the opportunity to kill Walter around 10 pm"),
        Step(_s("He also burns his post unopened in the garden stove"),
             "An odd habit is not evidence of a poisoning.",
             "Tobias's bonfires of post are odd, but prove no means, motive or opportunity"),
        Step(_n(6, 7, 8, 9), "A murderer needs the means, a motive and the opportunity.",
             "Tobias has motive and opportunity, but no proven means"),
        Step(_n(5, 10), "Only a suspect with all three can be the murderer.",
             "Irene is the most likely murderer"),
    ),
    answer=2,
)  # fmt: skip


PLACEMENT = Solved(
    story=(
        "Priya, Owen and Lucia were setting up the school science fair in the gym. At the "
        "start, the box of fuses was in the supply cupboard and the stopwatch was on the "
        "judges' table."
        "\n\n"
        "Owen carried the box of fuses up to the stage so the robotics team could reach it. "
        "Lucia was at the far end of the gym taping down extension cables with her back to "
        "the room, but Priya was sorting name badges right beside the stage and looked up as "
        "Owen set the box down."
        "\n\n"
        "A little later, Priya moved the box of fuses into the first-aid kit, where small "
        "children could not get at it. Owen had gone out to the car park to meet a delivery "
        "van. Lucia had just come back in for more tape and held the lid of the kit open for "
        "Priya."
        "\n\n"
        "Lucia then slipped the stopwatch into her jacket pocket so it would not wander off. "
        "By then Owen and Priya were both outside, carrying boxes of leaflets in from the van."
    ),
    question="Which location is the most likely place Owen would look to find the box of "
    "fuses, given the story?",
    choices=("the supply cupboard", "the stage", "the first-aid kit", "Lucia's jacket pocket"),
    steps=(
        Step(_s("Owen carried the box of fuses up to the stage so the robotics team could reach "
                "it"),
             "Whoever moves an item knows where they put it.",
             "Owen knew the box of fuses was on the stage"),
        Step(_s("Priya moved the box of fuses into the first-aid kit, where small children could "
                "not get at it",
                "Owen had gone out to the car park to meet a delivery van"),
             "Someone out in the car park cannot see what happens inside the gym.",
             "Owen did not see Priya put the box of fuses into the first-aid kit"),
        Step((*_s("At the start, the box of fuses was in the supply cupboard"), *_n(1, 2)),
             "A person looks for an item where they last saw it put, or put it themselves; if "
             "they saw none of its moves, where it was at the start.",
             "Owen would look for the box of fuses on the stage"),
    ),
    answer=2,
)  # fmt: skip


TEAMS = Solved(
    story=(
        "Nadia ran a community lunch club and needed two jobs done for Saturday's charity "
        "lunch: the cooking and the serving. She had three volunteers, Ben, Carla and Dev, and "
        "one job would need two of them."
        "\n\n"
        "Ben ran a food truck for nine years and still caters his friends' weddings. He gets "
        "flustered with strangers, though, and once tipped a tray of drinks over a customer at "
        "his cousin's café. Carla has never cooked for more than two people and says so "
        "cheerfully. She spent last summer waiting tables at a busy seaside restaurant, and "
        "the owner has asked her back. Dev helps out in his family's takeaway now and then, "
        "where his curries come out fine some days and bland on others. He has carried plates "
        "at a couple of school dinners without much trouble or much praise."
        "\n\n"
        "Ben and Carla have been friends since primary school and finish each other's jokes. "
        "Ben and Dev fell out over a borrowed van that came back dented, and they have barely "
        "spoken since. Carla and Dev have sung side by side in the same choir for years and "
        "move around each other like clockwork."
    ),
    question="Given the story, how would you uniquely allocate each person to make sure both "
    "jobs are done as well as possible?",
    choices=("the cooking: Ben and Carla; the serving: Dev",
             "the cooking: Ben; the serving: Carla and Dev",
             "the cooking: Dev; the serving: Ben and Carla"),
    steps=(
        Step(_s("Ben ran a food truck for nine years and still caters his friends' weddings"),
             "Years of cooking for paying customers make a strong cook.",
             "Ben would do the cooking very well"),
        Step(_s("He gets flustered with strangers, though, and once tipped a tray of drinks over "
                "a customer at his cousin's café"),
             "A server who panics in front of customers and spills on them serves badly.",
             "Ben would do the serving badly"),
        Step(_s("Carla has never cooked for more than two people"),
             "Cooking for a crowd is beyond someone who has only ever cooked for two.",
             "Carla would do the cooking badly"),
        Step(_s("She spent last summer waiting tables at a busy seaside restaurant, and the owner "
                "has asked her back"),
             "A waitress her old boss wants back is a good one.",
             "Carla would do the serving very well"),
        Step(_s("Dev helps out in his family's takeaway now and then, where his curries come out "
                "fine some days and bland on others"),
             "Some experience with uneven results makes an adequate cook.",
             "Dev would do the cooking passably"),
        Step(_s("He has carried plates at a couple of school dinners without much trouble or "
                "much praise"),
             "A little experience that went neither well nor badly makes an adequate server.",
             "Dev would do the serving passably"),
        Step(_s("Ben and Carla have been friends since primary school and finish each other's "
                "jokes"),
             "Old friends who anticipate each other cooperate smoothly.",
             "Ben and Carla would work very well together"),
        Step(_s("Carla and Dev have sung side by side in the same choir for years and move around "
                "each other like clockwork"),
             "People used to working side by side cooperate smoothly.",
             "Carla and Dev would work very well together"),
        Step(_n(1, 3, 7, 6), "Very well counts 2, passably 1 and badly 0, for a person's work "
             "and for a pair's teamwork alike.",
             "Choice 1 (the cooking: Ben and Carla; the serving: Dev) scores 2 + 0 + 2 + 1 = 5"),
        Step(_n(1, 4, 6, 8), "",
             "Choice 2 (the cooking: Ben; the serving: Carla and Dev) scores 2 + 2 + 1 + 2 = 7"),
        Step(_n(5, 2, 4, 7), "",
             "Choice 3 (the cooking: Dev; the serving: Ben and Carla) scores 1 + 0 + 2 + 2 = 5"),
        Step(_n(9, 10, 11), "The best allocation scores highest.",
             "Choice 2 is the best allocation"),
    ),
    answer=2,
)  # fmt: skip


@cache
def solved(domain: str) -> Solved:
    """The solved example of a domain (``murder``, ``placement`` or ``teams``)."""
    return {"murder": MURDER, "placement": PLACEMENT, "teams": TEAMS}[domain]
