"""Object placements: people move items between locations; each other person sees each move
with a probability; the question is where a person believes an item is.

F: the starting places and the moves, each with who saw it (the mover always does). Every
"saw" / "did not see" is grown into a reasoning tree explaining why (busy at a task, on the
phone, standing beside the mover...), which names neither the item nor where it went. The
question is never about the person who made the item's last move (they need no theory of
mind), and two answers in three are false beliefs (see ``ROLES``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rng import Chooser, weighted_choice
from .text import People, article, person
from .trees import Fact, Library, Node, Slots, banned_pattern, fact_type, grow, supports

__all__ = ["LIBRARY", "ROLES", "SETTINGS", "believed_place", "generate_placement"]


@dataclass(frozen=True)
class Role:
    title: str
    task: str  # what keeps this role busy: "was frothing milk for a row of lattes"
    why: tuple[str, str]  # what caused that, naming the person, in two wordings
    why2: tuple[str, str]  # and what caused that


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
        (Role("barista", "was frothing milk for a long row of lattes",
              ("{q} had a dozen lattes to make for a tour group", "A whole tour group was waiting on {q}'s coffees"),
              ("A tour group had just crowded in around {q}'s counter", "A coach had just dropped a crowd off right in front of {q}'s counter")),
         Role("baker", "was piping icing onto a three-tier birthday cake", ("{q} had to finish the cake for a party at noon", "{q}'s cake was due at a birthday party by noon"),
              ("{q} had promised the cake to a regular for a daughter's birthday", "A regular had begged {q} for a birthday cake for her daughter")),
         Role("cashier", "was counting the float at the till, coin by coin", ("{q}'s till had come up short the day before", "{q} had found the till short the day before"),
              ("The owner had asked {q} for a count after every shift", "{q} had been told to count the till after every shift")),
         Role("manager", "was arguing with a supplier's driver at the back door", ("{q}'s milk delivery was two hours late", "{q} was still waiting for a milk delivery that was two hours late"),
              ("The dairy had told {q} that its truck had broken down on the highway", "{q} had heard that the dairy's truck had broken down on the highway")),
         Role("dishwasher", "was scrubbing a mountain of mugs in the back sink", ("The machine {q} usually ran had broken that morning", "{q}'s dishwashing machine had broken down that morning"),
              ("A repair technician had told {q} he could not come until the next day", "{q} could not get a repair technician in until the next day"))),
        ("the alley behind the kitchen", "the basement stockroom", "the sidewalk tables out front"),
    ),
    Setting(
        "{names} were setting up the evening performance at the Lantern Theatre",
        (("in", "the prop cupboard"), ("on", "the stage manager's desk"), ("in", "the green room"),
         ("on", "the costume rack"), ("on", "the lighting booth shelf"), ("under", "the front row seats")),
        ("the dagger prop", "the lead's spectacles", "the prompt book", "the dressing-room key", "the wig box"),
        (Role("stage manager", "was calling cues over the headset for the sound check", ("The sound engineer had asked {q} to run every cue twice", "{q} had promised the sound engineer to run every cue twice"),
              ("{q} had heard the speakers crackle during the previous show", "The speakers had crackled all through {q}'s previous show")),
         Role("costumer", "was stitching a torn hem on the lead's gown", ("{q} had to mend the gown before the curtain went up", "{q} had until curtain-up to mend the lead's gown"),
              ("{q} had seen the lead catch the hem on a nail at the dress rehearsal", "The lead had torn the hem on a nail right in front of {q} at the dress rehearsal")),
         Role("lighting technician", "was up a ladder refocusing a spotlight", ("{q}'s spotlight had slipped off its mark overnight", "{q} had found a spotlight pointing at the wrong spot that morning"),
              ("{q} had been meaning to fix a loose bracket for a week", "A loose bracket had been bothering {q} for a week")),
         Role("understudy", "was running lines alone with eyes shut", ("{q} had been told to be ready to go on that night", "{q} might have to play the lead that night"),
              ("{q} had heard that the lead was at home with a sore throat", "The lead had phoned {q} to croak about a sore throat")),
         Role("usher", "was folding programmes by the box office", ("{q} had found the programmes delivered unfolded", "{q}'s programmes had come back from the printer unfolded"),
              ("The printer had told {q} that its folding machine was broken", "{q} had learned that the printer's folding machine was broken"))),
        ("the loading dock", "the orchestra pit", "the box office"),
    ),
    Setting(
        "{names} were getting the Harbor Street bakery ready for opening",
        (("in", "the proofing cabinet"), ("on", "the flour shelf"), ("in", "the bread display"),
         ("in", "the front drawer"), ("on", "the cooling rack"), ("in", "the delivery van")),
        ("the sourdough starter", "the order clipboard", "the van keys", "the good bread knife", "the birthday candles"),
        (Role("head baker", "was shaping two hundred rolls against the clock", ("{q} had a hotel's wedding breakfast order to fill", "{q} owed a hotel two hundred rolls for a wedding breakfast"),
              ("A hotel's own bakery had flooded, and its manager had called {q} in a panic", "{q} had taken a panicked call from a hotel whose bakery had flooded")),
         Role("delivery driver", "was loading crates into the van with the radio blaring", ("{q}'s first deliveries were due at six", "{q} had deliveries to make by six"),
              ("A café chain had asked {q} to deliver before its doors opened", "{q} had promised a café chain its bread before opening time")),
         Role("counter assistant", "was writing the day's specials on the chalkboard", ("The owner wanted {q} to chalk up a new board every day", "{q} was expected to chalk up a fresh board every morning"),
              ("A food blogger had praised {q}'s chalkboard menu", "{q}'s chalkboard menu had been praised online by a food blogger")),
         Role("apprentice", "was scraping burnt sugar off the oven trays", ("{q} had let a batch of buns catch in the oven", "A batch of buns had burned on {q}'s watch"),
              ("The oven {q} was using had a faulty thermostat", "{q}'s oven had a thermostat that nobody trusted")),
         Role("owner", "was on a long call with the bank about the new oven", ("{q} had loan papers to sign that day", "{q}'s bank loan had to be signed off that day"),
              ("{q}'s old oven had finally died", "{q}'s old oven had given up for good the week before"))),
        ("the flour store in the cellar", "the yard out back", "the office upstairs"),
    ),
    Setting(
        "{names} were closing up the Westbrook public library for the night",
        (("in", "the returns bin"), ("on", "the circulation desk"), ("in", "the rare-books cabinet"),
         ("in", "the staff kitchen"), ("on", "the reading-room trolley"), ("in", "the lost-and-found box")),
        ("the archive key", "the overdue-fines tin", "the signed first edition", "the projector remote", "the visitor log"),
        (Role("librarian", "was cataloguing a crate of donated books", ("A retired professor had given {q} his whole collection", "{q} had been handed a retired professor's whole library"),
              ("A retired professor had told {q} he was moving into a smaller flat", "{q} had heard that a retired professor was moving into a smaller flat")),
         Role("archivist", "was scanning fragile maps one at a time", ("The county wanted {q}'s digital copies by Friday", "{q} owed the county digital copies by Friday"),
              ("{q}'s grant for scanning the county maps ended that week", "The money for {q}'s map scanning ran out that week")),
         Role("security guard", "was checking every window latch on the upper floor", ("{q} had found a window open the week before", "A window had been left open on {q}'s rounds the week before"),
              ("{q} had chased pigeons out of the reading room", "Pigeons had got into the reading room on {q}'s watch")),
         Role("volunteer", "was reading a picture book to the last children", ("A parent had called {q} to say they were running late", "{q} was waiting with the children for a parent who was running late"),
              ("A parent had told {q} that traffic on the bridge was at a standstill", "{q} had heard that traffic on the bridge was at a standstill")),
         Role("caretaker", "was mopping the flooded basement stairs", ("{q} had found a burst pipe under the stairs", "A pipe had burst under the stairs on {q}'s watch"),
              ("{q} had warned everyone that the pipes would not survive the cold snap", "{q} had worried about the pipes all through the cold snap"))),
        ("the basement archive", "the children's corner", "the car park"),
    ),
    Setting(
        "{names} were running the front desk of the Alder Hotel during a busy weekend",
        (("in", "the key cabinet"), ("behind", "the front desk"), ("in", "the luggage room"),
         ("in", "the manager's safe"), ("on", "the concierge stand"), ("in", "the laundry cart")),
        ("the master key card", "the guest's lost passport", "the petty-cash envelope", "the wedding gift", "the spare radio"),
        (Role("receptionist", "was checking in a coach party one guest at a time", ("{q}'s coach party had arrived an hour early", "A coach party had turned up at {q}'s desk an hour early"),
              ("A coach driver had told {q} that the party had skipped its lunch stop", "{q} had heard that the coach had skipped its lunch stop")),
         Role("concierge", "was booking theatre tickets for a guest", ("A guest had asked {q} for seats at that evening's premiere", "{q} had a guest who wanted seats at that evening's premiere"),
              ("A guest had told {q} it was their wedding anniversary", "{q} had been told the seats were for a wedding anniversary")),
         Role("porter", "was hauling a tower of suitcases up the service stairs", ("The lift {q} usually took had been out of order since noon", "{q} could not use the lift, which had been broken since noon"),
              ("A technician had told {q} that the lift needed a new cable", "{q} had heard that the lift needed a new cable")),
         Role("housekeeper", "was stripping beds on the fourth floor", ("Every room on {q}'s floor had checked out at once", "All of {q}'s rooms had emptied at once"),
              ("{q} had heard that a conference had just ended", "A conference in the hotel had just ended, {q} had been told")),
         Role("night manager", "was going through the booking system line by line", ("Two guests had complained to {q} about being given the same room", "{q} had two guests booked into one room"),
              ("{q} blamed the booking software update from the night before", "{q} suspected the software update of the night before"))),
        ("the service stairs", "the fourth floor", "the car park"),
    ),
    Setting(
        "{names} were fixing bikes at the Spoke & Chain repair shop",
        (("on", "the workbench"), ("in", "the parts drawer"), ("on", "the pegboard wall"),
         ("in", "the customer-pickup rack"), ("in", "the shop van"), ("under", "the counter")),
        ("the torque wrench", "the customer's bike lock key", "the cash register key", "the box of spare spokes", "the repair ledger"),
        (Role("mechanic", "was truing a buckled wheel with total concentration", ("{q} had promised the wheel to a racer for the next morning", "A racer was counting on {q} to have the wheel ready by morning"),
              ("A racer had told {q} about a crash in training", "{q} had heard about a racer's crash in training")),
         Role("shop owner", "was haggling with a sales rep over bulk tyres", ("{q} wanted to buy tyres before the prices went up", "{q} hoped to stock up on tyres before the prices rose"),
              ("The factory had written to {q} about a price rise", "{q} had received a letter about a price rise from the tyre factory")),
         Role("apprentice", "was degreasing a chain in the solvent tub", ("The owner wanted {q} to get every chain spotless before delivery", "{q} had been told that every chain must be spotless before delivery"),
              ("A customer had complained to {q} about a greasy trouser leg", "{q} had taken a complaint about a greasy trouser leg")),
         Role("sales assistant", "was fitting a child for a first bike", ("{q}'s customers had come in on the way home from school", "A family had come into {q}'s shop straight from school"),
              ("A customer had told {q} it was her son's birthday", "{q} had heard it was a little boy's birthday")),
         Role("courier", "was strapping bikes onto the van's roof rack", ("{q} had three repaired bikes to deliver that afternoon", "Three repaired bikes were waiting for {q} to deliver"),
              ("{q}'s customers had paid for home delivery", "{q}'s customers had paid extra to have their bikes brought home"))),
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


# Every statement names the person it is about ({q}), so a reader can tell whose attention it
# explains; "scene" statements say what was going on at the moment of the move, "before" ones
# give the background (the narrator picks connectives to fit).
LIBRARY: Library = {
    "seen": fact_type("{q} saw {p} put {item} {dest}", exp=(_seen,)),
    "unseen": fact_type("{q} did not see {p} put {item} {dest}", exp=(_unseen,)),
    # why someone could follow the move
    "beside": fact_type("{q} was standing right next to {p}", "{q} stood at {p}'s elbow the whole time",
                 tense="scene",
                 exp=(supports("beside_why", rule="Someone waiting on a person stays right next to them."),)),
    "beside_why": fact_type("{q} was waiting for {p}'s answer to a question", "{q} was waiting for {p} to sign off a rota",
                     tense="before",
                     exp=(supports("beside_why2", rule="A question that needs an answer keeps a person waiting nearby."),)),
    "beside_why2": fact_type("{q} needed {p}'s answer about swapping a shift", "{q} had a question for {p} about the week's rota",
                      tense="before"),
    "idle": fact_type("{q} had nothing much to do", "{q} was taking a short break, looking around", tense="scene",
               exp=(supports("idle_why", rule="Someone whose work is done has time to look around."),)),
    "idle_why": fact_type("{q} had finished {q_their} own jobs early", "{q}'s tasks for the hour were all done",
                   tense="before", exp=(supports("idle_why2", rule="Someone who starts early finishes early."),)),
    "idle_why2": fact_type("{q} had come in early that day", "{q} had started work at dawn", tense="before"),
    "helping": fact_type("{q} was helping {p} clear some space", "{q} held the door open for {p}", tense="scene",
                  exp=(supports("helping_why", rule="Someone who offers to help stays alongside the person they help."),)),
    "helping_why": fact_type("{q} had offered {p} a hand", "{q} had promised to help {p} tidy up", tense="before",
                      exp=(supports("helping_why2", rule="People help colleagues who have helped them before."),)),
    "helping_why2": fact_type("{p} had covered one of {q}'s shifts the week before", "{p} had helped {q} move house the month before",
                       tense="before"),
    "chatting": fact_type("{q} and {p} were chatting the whole time", "{q} was telling {p} a long story", tense="scene",
                   exp=(supports("chatting_why", rule="Friends catching up talk face to face."),)),
    "chatting_why": fact_type("{q} and {p} had not caught up in weeks", "{q} was eager to tell {p} some news",
                       tense="before", exp=(supports("chatting_why2", rule="Someone back from a trip has news to tell."),)),
    "chatting_why2": fact_type("{q} had just come back from a trip abroad", "{q} had returned from a week away", tense="before"),
    # why someone could not follow the move
    "busy": fact_type("{q} {task}", "At that moment, {q} {task}", tense="scene",
               exp=(supports("busy_why", rule="{a_role} with that on their plate keeps their eyes on the job."),)),
    "busy_why": fact_type("{why}", "{why_b}", tense="before",
                   exp=(supports("busy_why2", rule="What has just happened decides what a person must get done next."),)),
    "busy_why2": fact_type("{why2}", "{why2_b}", tense="before"),
    "away": fact_type("{q} was over in {away}", "{q} had gone off to {away}", tense="scene",
               exp=(supports("away_why", rule="Errands take people to other parts of the building."),)),
    "away_why": fact_type("{q} had been sent to fetch something from {away}", "{q} needed something from {away}",
                   tense="before", exp=(supports("away_why2", rule="Supplies run out and must be fetched."),)),
    "away_why2": fact_type("{q} had run out of the supplies kept in {away}", "{q}'s spare supplies were all in {away}",
                    tense="before"),
    "phone": fact_type("{q} was on a long phone call", "{q} had {q_their} phone pressed to {q_their} ear", tense="scene",
                exp=(supports("phone_why", rule="A call about family comes first."),)),
    "phone_why": fact_type("{q}'s {relative} had called with news", "{q} was talking to {q_their} {relative}",
                    tense="before", exp=(supports("phone_why2", rule="Family news is long news."),)),
    "phone_why2": fact_type("{q}'s {relative} {news}", "{q} had just heard that {q_their} {relative} {news}",
                     tense="before"),
}  # fmt: skip

RELATIVES = ("sister", "brother", "cousin", "mother", "father", "aunt", "uncle")
NEWS = ("had got engaged", "was moving house that day", "had landed a new job",
        "was stuck at an airport", "had won a prize in a raffle", "had become a grandparent")  # fmt: skip

# How often the question is drawn to have each kind of answer: where the item really is
# ("true": the person saw its last move; "true_own" when they had also moved it earlier);
# its starting place ("start": they saw none of its moves); where it was before its last
# move ("previous": they saw that move; "previous_own": they made it); or an older place
# ("older", "older_own"). The person asked never made the item's last move (they would need no theory of
# mind). The weights keep each simple rule (the true place, the start, the previous place,
# the person's own last move) near 30%: "answer where the item really is" is right 30% of
# the time, within the 40%. Questions are about items moved at least twice whenever
# the story has one, so the start, previous and final places differ.
ROLES = ("true", "true_own", "start", "previous", "previous_own", "older", "older_own")
ROLE_WEIGHTS = (0.15, 0.15, 0.24, 0.20, 0.12, 0.11, 0.03)
_REDRAWS = 30  # move histories tried for the drawn kind of answer before taking any


def believed_place(start: str, moves: Sequence[Mapping[str, Any]], who: str, item: str) -> str:
    """Φ: where ``who`` believes ``item`` is: the last move of it they saw, else the start."""
    place = start
    for m in moves:
        if m["item"] == item and (m["person"] == who or who in m["seen_by"]):
            place = m["to"]
    return place


def _history(
    ch: Chooser,
    cast: Sequence[tuple[str, str]],
    things: Sequence[str],
    places: Sequence[str],
    start: Mapping[str, str],
    moves: int,
    see_prob: float,
) -> list[dict[str, Any]]:
    """The moves, each with who saw it (the mover always knows)."""
    where = dict(start)
    history: list[dict[str, Any]] = []
    for _ in range(moves):
        item = ch.choice(things)
        mover = ch.randint(0, len(cast) - 1)
        dest = ch.choice([p for p in places if p != where[item]])
        seen = [cast[k][0] for k in range(len(cast)) if k != mover and ch.random() < see_prob]
        history.append({"person": cast[mover][0], "item": item, "from": where[item], "to": dest,
                        "seen_by": seen, "mover": mover})  # fmt: skip
        where[item] = dest
    return history


def _questions(
    cast: Sequence[tuple[str, str]], start: Mapping[str, str], history: Sequence[Mapping[str, Any]]
) -> dict[str, list[tuple[int, str]]]:
    """The questions a story allows, by kind of answer (``ROLES``): (person, item) for every
    item that moved (twice or more, if any did) and every person but the one who made its
    last move, who knows where it is (no theory of mind needed)."""
    out: dict[str, list[tuple[int, str]]] = {r: [] for r in ROLES}
    items = list(dict.fromkeys(m["item"] for m in history))
    twice = [i for i in items if sum(m["item"] == i for m in history) >= 2]
    for item in twice or items:
        moves = [m for m in history if m["item"] == item]
        final = moves[-1]["to"]
        previous = moves[-2]["to"] if len(moves) > 1 else start[item]
        for k, (name, _) in enumerate(cast):
            if moves[-1]["person"] == name:
                continue
            belief = believed_place(start[item], moves, name, item)
            own = [m["to"] for m in moves if m["person"] == name]
            if belief == final:
                role = "true_own" if own else "true"
            elif belief == start[item]:
                role = "start"
            elif belief == previous:
                role = "previous_own" if own and own[-1] == belief else "previous"
            else:
                role = "older_own" if own and own[-1] == belief else "older"
            out[role].append((k, item))
    return out


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
    # The kind of answer first, then move histories until one offers such a question (cheap:
    # the trees are grown only for the history kept).
    wanted = weighted_choice(ch, ROLES, ROLE_WEIGHTS)
    for _ in range(_REDRAWS):
        history = _history(ch, cast, things, places, start, moves, see_prob)
        asked = _questions(cast, start, history)
        if asked[wanted]:
            break
    else:  # no history offered that kind (a knob rules it out): any kind this one offers
        kinds = [r for r in ROLES if asked[r]]
        wanted = weighted_choice(ch, kinds, [ROLE_WEIGHTS[ROLES.index(r)] for r in kinds])
    pool = asked[wanted]
    who, item = ch.choice(pool)
    answer = believed_place(start[item], history, cast[who][0], item)
    where = dict(start)
    for m in history:
        where[m["item"]] = m["to"]
    # Choices: the answer, the item's other places, then places the story mentions (so a
    # reader cannot pick the one named most often), four in all, shuffled.
    own = [start[item], *[m["to"] for m in history if m["item"] == item]]
    mentioned = [*start.values(), *[m["to"] for m in history]]
    others = [p for p in dict.fromkeys(own) if p != answer]
    rest = [p for p in dict.fromkeys(mentioned) if p not in own]
    ch.shuffle(others)
    ch.shuffle(rest)
    unmentioned = [p for p in places if p not in mentioned]
    ch.shuffle(unmentioned)
    options = [answer, *(others + rest + unmentioned)[:3]]
    ch.shuffle(options)
    # Trees: for every move and every other person, why they did or did not see it.
    used: set[str] = set()
    # One relative, one piece of family news and one store room a person, all story long.
    relatives = [ch.choice(RELATIVES) for _ in cast]
    news = [ch.choice(NEWS) for _ in cast]
    stores = [ch.choice(setting.away) for _ in cast]
    for m in history:
        trees: dict[str, Node] = {}
        mover = person("p", cast[m["mover"]])
        for k, who_k in enumerate(cast):
            if k == m["mover"]:
                continue
            q = person("q", who_k)
            slots = {**q, **mover, "item": m["item"], "dest": f"{locs[m['to']]} {m['to']}",
                     "role": roles[k].title, "task": roles[k].task,
                     "why": roles[k].why[0].format(**q), "why_b": roles[k].why[1].format(**q),
                     "why2": roles[k].why2[0].format(**q), "why2_b": roles[k].why2[1].format(**q),
                     "away": stores[k], "relative": relatives[k], "news": news[k],
                     "a_role": article(roles[k].title).capitalize()}  # fmt: skip
            kind = "seen" if who_k[0] in m["seen_by"] else "unseen"
            banned = banned_pattern([m["item"], _bare(m["item"]), m["to"], _bare(m["to"]), "saw",
                                     "noticed", "watched", "spotted"])  # fmt: skip
            trees[who_k[0]] = grow(LIBRARY, Fact(kind, slots), depth, ch, banned, "gold", used)
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
