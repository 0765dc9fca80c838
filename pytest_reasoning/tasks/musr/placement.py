"""Object placements: people move items between locations; each other person sees each move
with a probability; the question is where a person believes an item is.

F: the starting places and the moves, each with who saw it (the mover always does). Every
"saw" / "did not see" is grown into a reasoning tree explaining why (busy at a task, on the
phone, standing beside the mover...), which names neither the item nor where it went.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rng import Chooser
from .text import People, person
from .trees import Fact, Library, Node, Slots, banned_pattern, fact_type, grow, supports

__all__ = ["LIBRARY", "SETTINGS", "believed_place", "generate_placement"]


@dataclass(frozen=True)
class Role:
    title: str
    task: str  # what keeps this role busy: "was frothing milk for a row of lattes"
    why: str  # what caused that: "a tour group had just ordered a dozen lattes"
    why2: str  # and what caused that: "a tour bus had parked right outside"


@dataclass(frozen=True)
class Setting:
    intro: str  # "{names} work the morning shift at the Blue Door café"
    locations: tuple[tuple[str, str], ...]  # (preposition, place)
    items: tuple[str, ...]
    roles: tuple[Role, ...]
    away: tuple[str, ...]  # places in the setting out of sight of the others


SETTINGS = (
    Setting(
        "{names} were working the morning shift at the Blue Door café",
        (("in", "the pastry case"), ("in", "the back office"), ("behind", "the espresso machine"),
         ("in", "the storage closet"), ("under", "the register counter"), ("in", "the walk-in fridge")),
        ("the cashbox key", "the bag of single-origin beans", "the catering order book", "the cake server", "the spare apron"),
        (Role("barista", "was frothing milk for a long row of lattes", "a tour group had just ordered a dozen lattes at once",
              "a tour bus had parked right outside the café"),
         Role("baker", "was piping icing onto a three-tier birthday cake", "the cake had to be ready for a party at noon",
              "a regular customer had ordered the cake for a daughter's birthday"),
         Role("cashier", "was counting the float at the till, coin by coin", "the till had come up short the day before",
              "the owner had asked for a count after every shift"),
         Role("manager", "was arguing with a supplier about a late delivery", "the milk delivery was two hours late",
              "the dairy's truck had broken down on the highway"),
         Role("dishwasher", "was scrubbing a mountain of mugs in the back sink", "the dishwasher machine had broken that morning",
              "a repair technician could not come until the next day")),
        ("the alley behind the kitchen", "the basement stockroom", "the sidewalk tables out front"),
    ),
    Setting(
        "{names} were setting up the evening performance at the Lantern Theatre",
        (("in", "the prop cupboard"), ("on", "the stage manager's desk"), ("in", "the green room"),
         ("in", "the costume rack"), ("on", "the lighting booth shelf"), ("under", "the front row seats")),
        ("the dagger prop", "the lead's spectacles", "the prompt book", "the dressing-room key", "the wig box"),
        (Role("stage manager", "was calling cues over the headset for the sound check", "the sound engineer had asked to run every cue twice",
              "the speakers had crackled during the previous show"),
         Role("costumer", "was stitching a torn hem on the lead's gown", "the gown had ripped during the dress rehearsal",
              "the lead actor had caught the hem on a nail"),
         Role("lighting technician", "was up a ladder refocusing a spotlight", "the spotlight had slipped off its mark overnight",
              "a loose bracket had been rattling for a week"),
         Role("understudy", "was running lines alone with eyes shut", "the lead had called in with a sore throat",
              "a cold had been going round the cast"),
         Role("usher", "was folding programmes at the box office", "the printer had delivered the programmes unfolded",
              "the printing shop had changed its folding machine")),
        ("the loading dock", "the orchestra pit", "the box office"),
    ),
    Setting(
        "{names} were getting the Harbor Street bakery ready for opening",
        (("in", "the proofing cabinet"), ("on", "the flour shelf"), ("in", "the bread display"),
         ("in", "the front drawer"), ("on", "the cooling rack"), ("in", "the delivery van")),
        ("the sourdough starter", "the order clipboard", "the van keys", "the good bread knife", "the birthday candles"),
        (Role("head baker", "was shaping two hundred rolls against the clock", "a hotel had ordered rolls for a wedding breakfast",
              "the hotel's own bakery had flooded"),
         Role("delivery driver", "was loading crates into the van with the radio blaring", "the first deliveries were due at six",
              "the café chain wanted bread before its doors opened"),
         Role("counter assistant", "was writing the day's specials on the chalkboard", "the owner wanted a new board every day",
              "a food blogger had praised the chalkboard menu"),
         Role("apprentice", "was scraping burnt sugar off the oven trays", "a batch of buns had caught in the oven",
              "the oven's thermostat was faulty"),
         Role("owner", "was on a long call with the bank about the new oven", "the loan papers had to be signed that day",
              "the old oven had finally died")),
        ("the flour store in the cellar", "the yard out back", "the office upstairs"),
    ),
    Setting(
        "{names} were closing up the Westbrook public library for the night",
        (("in", "the returns bin"), ("on", "the circulation desk"), ("in", "the rare-books cabinet"),
         ("in", "the staff kitchen"), ("on", "the reading-room trolley"), ("in", "the lost-and-found box")),
        ("the archive key", "the overdue-fines tin", "the signed first edition", "the projector remote", "the visitor log"),
        (Role("librarian", "was cataloguing a crate of donated books", "a retired professor had donated his whole collection",
              "the professor was moving into a smaller flat"),
         Role("archivist", "was scanning fragile maps one at a time", "the county wanted digital copies by Friday",
              "a grant for the project ended that week"),
         Role("security guard", "was checking every window latch on the upper floor", "a window had been found open the week before",
              "pigeons had got into the reading room"),
         Role("volunteer", "was reading a picture book to the last children", "a parent was running late to collect them",
              "traffic on the bridge was at a standstill"),
         Role("caretaker", "was mopping the flooded basement stairs", "a pipe had burst under the stairs",
              "the heating had been turned off during a cold snap")),
        ("the basement archive", "the children's corner", "the car park"),
    ),
    Setting(
        "{names} were running the front desk of the Alder Hotel during a busy weekend",
        (("in", "the key cabinet"), ("behind", "the front desk"), ("in", "the luggage room"),
         ("in", "the manager's safe"), ("on", "the concierge stand"), ("in", "the laundry cart")),
        ("the master key card", "the guest's lost passport", "the petty-cash envelope", "the wedding gift", "the spare radio"),
        (Role("receptionist", "was checking in a coach party one guest at a time", "a coach had arrived an hour early",
              "the coach driver had skipped the planned lunch stop"),
         Role("concierge", "was on the phone booking theatre tickets for a guest", "a guest wanted seats for that evening's premiere",
              "the guest's anniversary fell on that day"),
         Role("porter", "was hauling a tower of suitcases up the service stairs", "the lift had been out of order since noon",
              "a technician was replacing its cable"),
         Role("housekeeper", "was stripping beds on the fourth floor", "every room on that floor had checked out at once",
              "a conference had ended that morning"),
         Role("night manager", "was going through the booking system line by line", "two guests had been given the same room",
              "the booking software had been updated overnight")),
        ("the service stairs", "the fourth floor", "the car park"),
    ),
    Setting(
        "{names} were fixing bikes at the Spoke & Chain repair shop",
        (("on", "the workbench"), ("in", "the parts drawer"), ("on", "the pegboard wall"),
         ("in", "the customer-pickup rack"), ("in", "the shop van"), ("under", "the counter")),
        ("the torque wrench", "the customer's bike lock key", "the cash register key", "the box of spare spokes", "the repair ledger"),
        (Role("mechanic", "was truing a buckled wheel with total concentration", "a racer needed the wheel for a race the next morning",
              "the racer had crashed in training"),
         Role("shop owner", "was haggling with a sales rep over bulk tyres", "the tyre prices were going up next month",
              "the factory had announced a price rise"),
         Role("apprentice", "was degreasing a chain in the solvent tub", "the owner wanted every chain spotless before delivery",
              "a customer had complained about a greasy trouser leg"),
         Role("sales assistant", "was fitting a child for a first bike", "the child's parents had come in on the way home from school",
              "it was the child's birthday"),
         Role("courier", "was strapping bikes onto the van's roof rack", "three repaired bikes had to go out that afternoon",
              "the customers had paid for home delivery")),
        ("the yard out back", "the storeroom upstairs", "the street out front"),
    ),
)  # fmt: skip


def _obs(s: Slots, ch: Chooser, kinds: Sequence[tuple[str, str, str]]) -> tuple[list[Fact], str]:
    first, second, rule = ch.choice(kinds)
    return [Fact(first, s), Fact(second, s)], rule


_SEEN = (
    ("beside", "idle", "Someone standing right beside a person, with nothing else to do, follows what they do."),
    ("helping", "idle", "Someone helping a person, with nothing else to do, follows what they carry and where."),
    ("beside", "chatting", "Two people chatting side by side keep an eye on each other's hands."),
)  # fmt: skip
_UNSEEN = (
    ("busy", "away", "Someone absorbed in a task in another part of the building cannot follow what happens elsewhere."),
    ("phone", "away", "Someone on the phone in another part of the building pays no attention to the others."),
    ("busy", "phone", "Someone juggling a task and a phone call has no attention left for anything else."),
)  # fmt: skip


def _seen(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    return _obs(s, ch, _SEEN)


def _unseen(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    return _obs(s, ch, _UNSEEN)


LIBRARY: Library = {
    "seen": fact_type("{q} saw {p} put {item} {dest}", exp=(_seen,)),
    "unseen": fact_type("{q} did not see {p} put {item} {dest}", exp=(_unseen,)),
    # why someone could follow the move
    "beside": fact_type("{q} was standing right next to {p} at that moment", "{q} stood at {p}'s elbow the whole time",
                 exp=(supports("beside_why", rule="Someone asked to wait for a person stays right next to them."),)),
    "beside_why": fact_type("{p} had asked {q} to wait there for a word", "{q} was waiting for {p} to sign off a rota",
                     exp=(supports("beside_why2", rule="A question that needs an answer keeps a person waiting nearby."),)),
    "beside_why2": fact_type("{q} needed {p}'s answer about swapping a shift", "{q} had a question for {p} about the week's rota"),
    "idle": fact_type("{q} had nothing to do just then", "{q} was taking a short break, looking around",
               exp=(supports("idle_why", rule="Someone whose work is done has time to look around."),)),
    "idle_why": fact_type("{q} had finished {q_their} own jobs early", "{q}'s tasks for the hour were all done",
                   exp=(supports("idle_why2", rule="Someone who starts early finishes early."),)),
    "idle_why2": fact_type("{q} had come in an hour before everyone else", "{q} started the day at dawn"),
    "helping": fact_type("{q} was helping {p} clear some space", "{q} held the door open for {p}",
                  exp=(supports("helping_why", rule="Someone who offers to help stays alongside the person they help."),)),
    "helping_why": fact_type("{q} had offered {p} a hand", "{q} had promised to help {p} tidy up",
                      exp=(supports("helping_why2", rule="People help colleagues who have helped them before."),)),
    "helping_why2": fact_type("{p} had covered one of {q}'s shifts the week before", "{p} had helped {q} move flat last month"),
    "chatting": fact_type("{q} and {p} were chatting the whole time", "{q} was telling {p} a long story",
                   exp=(supports("chatting_why", rule="Friends catching up talk face to face."),)),
    "chatting_why": fact_type("{q} and {p} had not caught up in weeks", "{q} was eager to tell {p} some news",
                       exp=(supports("chatting_why2", rule="Someone back from a trip has news to tell."),)),
    "chatting_why2": fact_type("{q} had just come back from a trip abroad", "{q} had returned from a week away"),
    # why someone could not follow the move
    "busy": fact_type("{q} {task}", "At that moment {q} {task}",
               exp=(supports("busy_why", rule="When that happens, the {role} has to deal with it at once, eyes down."),)),
    "busy_why": fact_type("{why}", "Just then, {why}",
                   exp=(supports("busy_why2", rule="One thing leads to another."),)),
    "busy_why2": fact_type("{why2}", "That morning {why2}"),
    "away": fact_type("{q} was over in {away}", "{q} had gone off to {away}",
               exp=(supports("away_why", rule="Errands take people to other parts of the building."),)),
    "away_why": fact_type("{q} had been sent to fetch something from {away}", "{q} needed something from {away}",
                   exp=(supports("away_why2", rule="Supplies run out and must be fetched."),)),
    "away_why2": fact_type("The supplies {q} keeps in {away} were needed upstairs", "{q} had run out of the supplies stored in {away}"),
    "phone": fact_type("{q} was on a long phone call", "{q} had {q_their} phone pressed to {q_their} ear",
                exp=(supports("phone_why", rule="A call about family comes first."),)),
    "phone_why": fact_type("{q}'s {relative} had called with news", "{q} was talking to {q_their} {relative}",
                    exp=(supports("phone_why2", rule="Family news is long news."),)),
    "phone_why2": fact_type("{q}'s {relative} had just had a baby", "{q}'s {relative} was moving house that day"),
}  # fmt: skip

RELATIVES = ("sister", "brother", "cousin", "mother", "father", "aunt", "uncle")


def believed_place(start: str, moves: Sequence[Mapping[str, Any]], who: str, item: str) -> str:
    """Φ: where ``who`` believes ``item`` is: the last move of it they saw, else the start."""
    place = start
    for m in moves:
        if m["item"] == item and (m["person"] == who or who in m["seen_by"]):
            place = m["to"]
    return place


def generate_placement(
    ch: Chooser, depth: int, people: int, items: int, moves: int, see_prob: float, names: People
) -> dict[str, Any]:
    setting = ch.choice(SETTINGS)
    cast = ch.sample(names, people)
    roles = ch.sample(setting.roles, people)
    things = ch.sample(setting.items, items)
    locs = {place: prep for prep, place in setting.locations}
    places = list(locs)
    start = {i: p for i, p in zip(things, ch.sample(places, items), strict=True)}
    where = dict(start)
    history: list[dict[str, Any]] = []
    for _ in range(moves):
        item = ch.choice(things)
        mover = ch.randint(0, people - 1)
        dest = ch.choice([p for p in places if p != where[item]])
        seen = [cast[k][0] for k in range(people) if k != mover and ch.random() < see_prob]
        history.append({"person": cast[mover][0], "item": item, "from": where[item], "to": dest,
                        "seen_by": seen, "mover": mover})  # fmt: skip
        where[item] = dest
    # The question: someone and an item that moved, drawn so both kinds of answer occur.
    moved = sorted({m["item"] for m in history}, key=things.index)
    item = ch.choice(moved)
    who = ch.randint(0, people - 1)
    answer = believed_place(start[item], history, cast[who][0], item)
    # Choices: the answer, the item's other places, then places the story mentions (so a
    # reader cannot pick the one named most often), four in all, shuffled.
    own = [start[item], *[m["to"] for m in history if m["item"] == item]]
    mentioned = [*start.values(), *[m["to"] for m in history]]
    pool = [p for p in dict.fromkeys(own) if p != answer]
    rest = [p for p in dict.fromkeys(mentioned) if p not in own]
    ch.shuffle(pool)
    ch.shuffle(rest)
    unmentioned = [p for p in places if p not in mentioned]
    ch.shuffle(unmentioned)
    options = [answer, *(pool + rest + unmentioned)[:3]]
    ch.shuffle(options)
    # Trees: for every move and every other person, why they did or did not see it.
    for m in history:
        trees: dict[str, Node] = {}
        for k, who_k in enumerate(cast):
            if k == m["mover"]:
                continue
            slots = {**person("q", who_k), **person("p", cast[m["mover"]]),
                     "item": m["item"], "dest": f"{locs[m['to']]} {m['to']}",
                     "role": roles[k].title, "task": roles[k].task, "why": roles[k].why,
                     "why2": roles[k].why2, "away": ch.choice(setting.away),
                     "relative": ch.choice(RELATIVES)}  # fmt: skip
            kind = "seen" if who_k[0] in m["seen_by"] else "unseen"
            banned = banned_pattern([m["item"], _bare(m["item"]), m["to"], _bare(m["to"]), "saw",
                                     "noticed", "watched", "spotted"])  # fmt: skip
            trees[who_k[0]] = grow(LIBRARY, Fact(kind, slots), depth, ch, banned, "gold")
        m["trees"] = trees
    return {
        "setting": setting.intro,
        "people": [c[0] for c in cast],
        "genders": [c[1] for c in cast],
        "roles": [r.title for r in roles],
        "locations": locs,
        "start": start,
        "moves": history,
        "query": {"person": cast[who][0], "item": item},
        "choices": options,
        "answer": answer,
        "true_place": where[item],
    }


def _bare(phrase: str) -> str:
    """``the cashbox key`` → ``cashbox key`` (so "a cashbox key" is caught too)."""
    return phrase.split(" ", 1)[1] if phrase.split(" ", 1)[0] in ("the", "a", "an") else phrase
