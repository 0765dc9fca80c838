"""Team allocations: three people, two tasks; one task gets a pair, the other one person.
Score = the skills of each person at their task + the pair's teamwork; the best allocation
beats every other by at least ``margin`` points.

F: skill 0-2 per person per task and teamwork 0-2 per pair. Each is grown into a tree of
past experiences and social history that never names the skill or the teamwork itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import product
from typing import Any

from ...rng import Chooser
from .text import People, person
from .trees import Fact, Library, Node, banned_pattern, fact_type, grow, supports

__all__ = ["LIBRARY", "SETTINGS", "allocations", "best_allocation", "generate_teams", "score"]


@dataclass(frozen=True)
class Job:
    name: str  # "the kitchen"
    doing: str  # "cooking on a busy line"
    craft: str  # the same as a noun: "line cooking"
    place: str  # "a busy diner kitchen"
    flop: str  # what going badly looks like: "served raw chicken at a barbecue"


@dataclass(frozen=True)
class Setting:
    intro: str  # "{leader} was organising the spring fundraiser at Maple Street School"
    jobs: tuple[Job, Job]


SETTINGS = (
    Setting("{leader} was organising the spring fundraiser at Maple Street School",
            (Job("the bake sale", "baking for a crowd", "baking", "a village bakery", "burned three trays of scones at the last fair"),
             Job("the raffle", "selling raffle tickets", "ticket selling", "a charity call centre", "lost the ticket stubs at last year's raffle"))),
    Setting("{leader} ran a small restaurant and had to staff the Saturday night service",
            (Job("the kitchen", "cooking on a busy line", "line cooking", "a hotel kitchen", "served raw chicken at a family barbecue"),
             Job("the dining room", "waiting tables", "table service", "a seaside café", "spilled soup on a customer twice in one week"))),
    Setting("{leader}, the editor of the Brightwater Gazette, needed a team for an election-night special",
            (Job("the reporting", "interviewing people and writing fast", "reporting", "a radio newsroom", "misquoted the mayor in a school newsletter"),
             Job("the photography", "taking photographs", "photography", "a wedding studio", "forgot to remove the lens cap at a cousin's wedding"))),
    Setting("{leader} was producing a short film over one long weekend",
            (Job("the camera", "operating a film camera", "camera work", "a television studio", "shot a whole interview out of focus"),
             Job("the sound", "recording sound on location", "sound recording", "a recording studio", "recorded an hour of wind noise and nothing else"))),
    Setting("{leader} was getting the Eastside community garden ready for its open day",
            (Job("the raised beds", "building with timber", "carpentry", "a carpentry workshop", "built a shelf that fell down the same day"),
             Job("the seedling stall", "raising seedlings for sale", "gardening", "a garden centre", "watered the seedlings with weedkiller"))),
    Setting("{leader} led a tiny startup with a product launch in two weeks",
            (Job("the code", "writing software", "programming", "a bank's IT department", "deleted a client's database by accident"),
             Job("the customer calls", "talking customers through problems", "customer support", "a phone help desk", "hung up on a client by mistake, twice"))),
    Setting("{leader} was the curator preparing the museum's new exhibition",
            (Job("the guided tours", "guiding groups through galleries", "tour guiding", "a historic castle", "got lost leading a school group"),
             Job("the restoration", "restoring old paintings", "painting restoration", "a conservation studio", "smudged a watercolour while cleaning it"))),
)  # fmt: skip

YEARS = ("three", "five", "six", "eight", "ten", "twelve")


# Every statement about a skill names the work it is about ({doing}, {craft}, {place} or
# {flop}), so a reader can tell which job it bears on.
LIBRARY: Library = {
    "skill2": fact_type("{p} would do {job} very well",
                 exp=(supports("pro", "praised", rule="Years of doing the work for a living, and praise for it, make someone a strong choice for it."),
                      supports("pro", "trained", rule="Someone trained in the work who did it for a living can be trusted with it.")),
                 deep=(supports("pro", "praised", "mentor", rule="Someone who did the work for a living, was praised for it and now teaches it is a strong choice."),)),
    "skill1": fact_type("{p} would do {job} passably",
                 exp=(supports("dabbled", "mixed", rule="A little experience with uneven results makes someone an adequate choice."),
                      supports("class", "mixed", rule="A short course and some uneven practice make someone an adequate choice.")),
                 deep=(supports("dabbled", "mixed", "polite_nods", rule="A little uneven experience that earns polite nods makes someone an adequate choice."),)),
    "skill0": fact_type("{p} would do {job} badly",
                 exp=(supports("never", "flop", rule="Someone with no experience and a disaster on record would struggle."),
                      supports("flop", "dislikes", rule="Someone who failed at the work and hates doing it would struggle.")),
                 deep=(supports("never", "flop", "avoids", rule="Someone with a disaster on record who avoids the work at all costs would struggle."),)),
    "pro": fact_type("{p} spent {years} years {doing} at {place}", "Before this, {p} worked at {place}, {doing}, for {years} years",
              exp=(supports("pro_why", rule="A family business passes its trade to its children."),)),
    "pro_why": fact_type("{p}'s family ran {place}, where {p_they} started {doing} as a teenager",
                  "{p} took over {p_their} parents' work at {place}, {doing}",
                  exp=(supports("pro_why2", rule="Children who grow up around a trade learn it young."),)),
    "pro_why2": fact_type("{p} grew up in the rooms above {place}, watching the grown-ups at their {craft}",
                   "{p} spent every school holiday at {place}, learning the trade"),
    "praised": fact_type("{p}'s old boss at {place} still calls {p_them} the best hire {p_they} ever made",
                  "A customer once wrote to the local paper about {p}'s {craft}",
                  exp=(supports("praised_why", rule="Praise that is written down tends to be earned."),)),
    "praised_why": fact_type("A letter thanking {p} for {p_their} {craft} is framed on {p_their} wall",
                      "{p} keeps a newspaper clipping about {p_their} {craft} in {p_their} wallet", tense="now",
                      exp=(supports("praised_why2", rule="People keep the praise they are proud of."),)),
    "praised_why2": fact_type("{p} shows a newspaper clipping about {p_their} {craft} to anyone who asks",
                       "{p} mentions a customer's letter about {p_their} {craft} whenever work comes up", tense="now"),
    "trained": fact_type("{p} finished a diploma in {craft}", "{p} holds a certificate from a course in {craft}",
                  exp=(supports("trained_why", rule="A diploma takes years of study."),)),
    "trained_why": fact_type("{p} studied {craft} at night for two years", "{p} paid for a course in {craft} out of {p_their} savings",
                      exp=(supports("trained_why2", rule="People invest in what they care about."),)),
    "trained_why2": fact_type("{p} turned down a holiday to pay the fees for a course in {craft}",
                       "{p} worked weekends to cover the tuition for a diploma in {craft}"),
    "dabbled": fact_type("{p} has helped with the {craft} at a few school fairs", "{p} has tried {doing} a couple of times as a volunteer",
                  tense="now", exp=(supports("dabbled_why", rule="Volunteers pitch in where friends ask them to."),)),
    "dabbled_why": fact_type("A friend once talked {p} into helping with {doing}", "{p}'s neighbour needed a hand with {doing} now and then",
                      exp=(supports("dabbled_why2", rule="Friends ask favours of those who live close by."),)),
    "dabbled_why2": fact_type("A friend who once roped {p} into {doing} lives two doors down",
                       "{p}'s neighbour, who sometimes needs help {doing}, shares a fence with {p_them}", tense="now"),
    "class": fact_type("{p} took a short evening class in {craft} at the library last year", "{p} has watched a few online tutorials on {craft} in the evenings",
                exp=(supports("class_why", rule="New hobbies often start from a gift."),)),
    "class_why": fact_type("A class in {craft} was last year's birthday present from {p}'s {relative}",
                    "{p}'s {relative} had signed {p_them} up for a course in {craft}",
                    exp=(supports("class_why2", rule="Relatives give presents on birthdays."),)),
    "class_why2": fact_type("For {p}'s last birthday, {p_their} {relative} paid for a short course in {craft}",
                     "A voucher for lessons in {craft} came with {p}'s birthday card"),
    "mixed": fact_type("{p}'s results at {doing} have been hit and miss so far", "Sometimes {p} does fine at {doing}, and sometimes not at all",
                tense="now", exp=(supports("mixed_why", rule="Beginners are uneven."),)),
    "mixed_why": fact_type("{p} is still learning the basics of {craft}, one step at a time", "{p} has only tried {doing} a handful of times so far",
                    tense="now", exp=(supports("mixed_why2", rule="A busy job leaves little time to practise."),)),
    "mixed_why2": fact_type("{p}'s day job leaves little time to practise {craft} properly", "Long shifts mean {p} rarely gets a chance to try {doing}",
                     tense="now"),
    "never": fact_type("{p} has never once tried {doing}, not even for fun", "{p} freely admits to having no experience at all of {doing}", tense="now",
                exp=(supports("never_why", rule="People avoid what they were never shown."),)),
    "never_why": fact_type("Nobody in {p}'s family ever tried their hand at {craft}", "{p} always left {doing} to others in the family",
                    exp=(supports("never_why2", rule="Habits from home last."),)),
    "never_why2": fact_type("{p}'s older siblings always took care of {doing} at home", "{p} grew up with others handling the {craft} in the family"),
    "flop": fact_type("{p} once {flop}", "Everyone still remembers the time {p} {flop}",
               exp=(supports("flop_why", rule="Rushed work goes wrong."),)),
    "flop_why": fact_type("{p} was rushing the day {p_they} {flop}", "{p} was distracted and hurrying when {p_they} {flop}",
                   exp=(supports("flop_why2", rule="Lateness makes people rush."),)),
    "flop_why2": fact_type("{p} arrived late and flustered on the day {p_they} {flop}", "{p} had overslept on the morning {p_they} {flop}"),
    "dislikes": fact_type("{p} groans out loud whenever anyone so much as mentions {craft}", "{p} says {craft} is the most tedious thing imaginable, bar none",
                   tense="now", exp=(supports("dislikes_why", rule="A bad experience sours people on a task."),)),
    "dislikes_why": fact_type("{p} had a miserable summer job {doing}", "{p} was made to spend a school summer {doing} as a punishment",
                       exp=(supports("dislikes_why2", rule="A harsh boss makes work miserable."),)),
    "dislikes_why2": fact_type("{p}'s supervisor in that summer job {doing} shouted at everyone",
                        "{p} was paid almost nothing for {doing} that summer"),
    "mentor": fact_type("{p} now teaches beginners {craft} on weekends", "Newcomers at {place} are sent to {p} to learn {craft}",
                 tense="now", exp=(supports("mentor_why", rule="People are asked to teach what they have mastered."),)),
    "mentor_why": fact_type("{p}'s old employer at {place} asked {p_them} to train new staff in {craft}",
                     "A school invited {p} to run a workshop on {craft}",
                     exp=(supports("mentor_why2", rule="Those who train others are the ones trusted most."),)),
    "mentor_why2": fact_type("At {place}, {p} was always the one trusted with newcomers to {craft}",
                      "A workshop on {craft} that {p} ran was fully booked twice"),
    "polite_nods": fact_type("{p}'s efforts at {doing} usually earn polite nods", "People call {p}'s {craft} 'fine, mostly'",
                      tense="now", exp=(supports("polite_nods_why", rule="Honest friends give lukewarm verdicts."),)),
    "polite_nods_why": fact_type("Friends who watched {p} try {craft} said it was fine but nothing special",
                          "A neighbour who saw {p} at {craft} called it 'perfectly all right'",
                          exp=(supports("polite_nods_why2", rule="Friends come to watch one another try new things."),)),
    "polite_nods_why2": fact_type("{p} invited a few friends along the last time {p_they} tried {doing}",
                           "{p} asked a neighbour for an honest opinion on {p_their} {craft}"),
    "avoids": fact_type("{p} pays others to handle {craft} for {p_them}", "{p} swaps chores to get out of {doing}", tense="now",
                 exp=(supports("avoids_why", rule="People avoid what embarrassed them."),)),
    "avoids_why": fact_type("{p} still blushes when {craft} comes up", "{p} changes the subject when asked about {craft}",
                     tense="now", exp=(supports("avoids_why2", rule="Public mishaps stay embarrassing."),)),
    "avoids_why2": fact_type("The story of {p}'s last attempt at {doing} went round the whole office",
                      "{p}'s last try at {doing} was laughed about for weeks"),
    # teamwork
    "team2": fact_type("{p} and {q} would work very well together",
                exp=(supports("friends", "in_sync", rule="Old friends who anticipate each other cooperate smoothly."),),
                deep=(supports("friends", "in_sync", "shared_win", rule="Old friends with a shared success behind them cooperate smoothly."),)),
    "team1": fact_type("{p} and {q} would work together adequately",
                exp=(supports("polite", "little_contact", rule="Polite near-strangers manage together without sparks or friction."),),
                deep=(supports("polite", "little_contact", "committee", rule="Polite near-strangers who once shared a committee quietly manage together."),)),
    "team0": fact_type("{p} and {q} would work badly together",
                exp=(supports("feud", "undermines", rule="People who quarrel and resent each other struggle side by side."),),
                deep=(supports("feud", "undermines", "sabotage", rule="People who quarrel, resent and trip each other up struggle side by side."),)),
    "friends": fact_type("{p} and {q} have been friends since school", "{p} was a witness at {q}'s wedding", tense="now",
                  exp=(supports("friends_why", rule="Neighbours' children grow up together."),)),
    "friends_why": fact_type("{p} and {q} grew up on the same street", "{p}'s and {q}'s families went on holiday together",
                      exp=(supports("friends_why2", rule="Families who live close share their summers."),)),
    "friends_why2": fact_type("The families of {p} and {q} have lived next door to each other for decades",
                       "{p}'s mother and {q}'s mother are sisters", tense="now"),
    "in_sync": fact_type("{p} and {q} finish each other's sentences", "{q} always knows what {p} needs before {p} asks", tense="now",
                  exp=(supports("in_sync_why", rule="Practice makes partners anticipate each other."),)),
    "in_sync_why": fact_type("{p} and {q} have run a weekend stall together for years", "{p} and {q} play doubles tennis every week",
                      tense="now", exp=(supports("in_sync_why2", rule="Regular partners learn each other's habits."),)),
    "in_sync_why2": fact_type("{p} and {q} have not missed their weekly tennis match in five years", "{p} and {q} have won the club doubles twice",
                       tense="now"),
    "polite": fact_type("{p} and {q} are always polite to each other", "{p} and {q} nod politely to each other in the hallway", tense="now",
                 exp=(supports("polite_why", rule="Newcomers are met with politeness."),)),
    "polite_why": fact_type("{q} joined only a month ago and has barely met {p}", "{p} hardly knows {q} yet, after only a few weeks",
                     exp=(supports("polite_why2", rule="New arrivals take time to settle in."),)),
    "polite_why2": fact_type("{q} moved to town this spring and has met {p} only a few times",
                      "{q} transferred from another branch recently and barely knows {p}"),
    "little_contact": fact_type("{p} and {q} have rarely worked side by side", "{p} and {q} work different hours", tense="now",
                         exp=(supports("little_contact_why", rule="Different shifts keep people apart."),)),
    "little_contact_why": fact_type("{p} works mornings while {q} works evenings", "{q} is usually off site when {p} is in",
                             tense="now", exp=(supports("little_contact_why2", rule="Family duties shape people's hours."),)),
    "little_contact_why2": fact_type("{p} picks up {p_their} children every afternoon, just as {q} arrives",
                              "{q} looks after an elderly parent in the mornings, while {p} is at work",
                              tense="now"),
    "feud": fact_type("{p} and {q} had a shouting match the month before", "{p} refuses to sit at the same table as {q}",
               exp=(supports("feud_why", rule="Disputes over credit turn colleagues bitter."),)),
    "feud_why": fact_type("{p} accused {q} of taking credit for {p_their} idea", "{q} told the boss about {p}'s mistake",
                   exp=(supports("feud_why2", rule="Promotions make credit matter."),)),
    "feud_why2": fact_type("{p} and {q} had both applied for the same promotion last winter", "A promotion was at stake when {p} and {q} fell out last winter"),
    "undermines": fact_type("{q} quietly redoes anything {p} finishes", "{p} rolls {p_their} eyes whenever {q} speaks", tense="now",
                     exp=(supports("undermines_why", rule="Distrust shows in small gestures."),)),
    "undermines_why": fact_type("{q} does not trust {p}'s judgement about anything important", "{p} thinks {q} is careless with other people's work", tense="now",
                         exp=(supports("undermines_why2", rule="One bad experience breeds lasting distrust."),)),
    "undermines_why2": fact_type("{p} once lost a file {q} had spent a whole week putting together", "{q} once broke an expensive tool {p} had lent {q_them}"),
    "shared_win": fact_type("{p} and {q} once organised a charity run that raised a record sum",
                     "{p} and {q} planned a surprise party together that went off perfectly",
                     exp=(supports("shared_win_why", rule="Success is remembered by those who shared it."),)),
    "shared_win_why": fact_type("A photo of {p} and {q} at the finish line hangs in the office",
                         "Everyone still talks about the party {p} and {q} threw", tense="now",
                         exp=(supports("shared_win_why2", rule="Good memories get framed."),)),
    "shared_win_why2": fact_type("{q} had a photo of {q_them} and {p} at a charity finish line framed as a gift",
                          "{p} keeps the party invitation {p_they} and {q} designed side by side", tense="now"),
    "committee": fact_type("{p} and {q} once sat on the same committee without incident",
                    "{p} and {q} shared a desk for a month and hardly spoke",
                    exp=(supports("committee_why", rule="Committees keep people busy with their own parts."),)),
    "committee_why": fact_type("On that committee, {p} handled the budget while {q} handled the venue",
                        "{p} and {q} each had separate duties that month",
                        exp=(supports("committee_why2", rule="Work is split to keep things simple."),)),
    "committee_why2": fact_type("The chair of the spring committee split the work so {p} and {q} rarely overlapped",
                         "On the spring committee, {p} and {q} were given separate tasks from the start"),
    "sabotage": fact_type("{p} once 'forgot' to pass on a message from {q}", "{q} once left {p} off an important email",
                   exp=(supports("sabotage_why", rule="Small slights are how grudges show."),)),
    "sabotage_why": fact_type("{q} missed a meeting because of the message {p} did not pass on",
                       "{p} missed a deadline because {q} had left {p_them} off the email",
                       exp=(supports("sabotage_why2", rule="Missed meetings and deadlines have consequences."),)),
    "sabotage_why2": fact_type("{q} was reprimanded for missing a meeting {p} never told {q_them} about",
                        "{p} was blamed for a deadline missed because {q} had left {p_them} off an email"),
}  # fmt: skip

RELATIVES = ("sister", "brother", "aunt", "uncle", "mother", "father", "cousin")
SKILL_BANNED = ("skill", "skills", "skilled", "good at", "bad at", "talent", "talented",
                "expert", "competent", "incompetent", "hopeless", "natural", "very well", "badly")  # fmt: skip
TEAM_BANNED = ("teamwork", "work well together", "get along", "gets along", "work together",
               "team", "pair", "very well", "badly")  # fmt: skip

Allocation = tuple[tuple[str, ...], tuple[str, ...]]  # (people on job 0, people on job 1)


def allocations(people: Sequence[str]) -> list[Allocation]:
    """Every way to give one job two people and the other one (6 for 3 people)."""
    out: list[Allocation] = []
    for single in people:
        pair = tuple(p for p in people if p != single)
        out.append((pair, (single,)))
        out.append(((single,), pair))
    return out


def score(
    alloc: Allocation, skills: Mapping[str, Sequence[int]], teamwork: Mapping[str, int]
) -> int:
    total = sum(skills[p][j] for j, group in enumerate(alloc) for p in group)
    for group in alloc:
        if len(group) == 2:
            total += teamwork[pair_key(*group)]
    return total


def pair_key(a: str, b: str) -> str:
    return " & ".join(sorted((a, b)))


def best_allocation(
    people: Sequence[str], skills: Mapping[str, Sequence[int]], teamwork: Mapping[str, int]
) -> tuple[Allocation, int]:
    """Φ: the best allocation and its lead over the runner-up."""
    ranked = sorted(allocations(people), key=lambda a: -score(a, skills, teamwork))
    return ranked[0], score(ranked[0], skills, teamwork) - score(ranked[1], skills, teamwork)


_PAIRS = ((0, 1), (0, 2), (1, 2))


@cache
def _leads() -> tuple[tuple[tuple[int, ...], int], ...]:
    """Every (skills of 3 people at 2 jobs, teamwork of 3 pairs), flattened, with how far its
    best allocation leads the runner-up (3^9 = 19,683, computed once per process). The six
    allocations' scores are summed from the flat tuple by index (what `best_allocation`
    computes through dicts, and `test_musr` checks they agree): 0.03 s instead of 0.8."""
    out = []
    for flat in product(range(3), repeat=9):
        s00, s01, s10, s11, s20, s21, t01, t02, t12 = flat
        scores = sorted(
            (
                s10 + s20 + t12 + s01,  # 1 and 2 on job 0, 0 alone on job 1
                s00 + s11 + s21 + t12,  # 0 alone on job 0, 1 and 2 on job 1
                s00 + s20 + t02 + s11,
                s10 + s01 + s21 + t02,
                s00 + s10 + t01 + s21,
                s20 + s01 + s11 + t01,
            ),
            reverse=True,
        )
        out.append((flat, scores[0] - scores[1]))
    return tuple(out)


@cache
def _clear_winners(margin: int) -> tuple[tuple[int, ...], ...]:
    return tuple(flat for flat, lead in _leads() if lead >= margin)


def generate_teams(ch: Chooser, depth: int, margin: int, names: People) -> dict[str, Any]:
    setting = ch.choice(SETTINGS)
    leader, *cast = ch.sample(names, 4)
    people = [c[0] for c in cast]
    flat = ch.choice(_clear_winners(margin))  # one draw: shrinks well, never loops
    skills = {p: [flat[2 * k], flat[2 * k + 1]] for k, p in enumerate(people)}
    teamwork = {pair_key(people[a], people[b]): flat[6 + n] for n, (a, b) in enumerate(_PAIRS)}
    best, lead = best_allocation(people, skills, teamwork)
    others = [a for a in allocations(people) if a != best]
    options = [best, *ch.sample(others, 2)]
    ch.shuffle(options)
    skill_banned = banned_pattern(SKILL_BANNED)
    team_banned = banned_pattern(TEAM_BANNED)
    trees: dict[str, list[Node]] = {p: [] for p in people}
    used: set[str] = set()  # no statement twice in one story
    for who in cast:
        for j, job in enumerate(setting.jobs):
            slots = {**person("p", who), "job": job.name, "doing": job.doing, "craft": job.craft,
                     "place": job.place, "flop": job.flop, "years": ch.choice(YEARS),
                     "relative": ch.choice(RELATIVES)}  # fmt: skip
            fact = Fact(f"skill{skills[who[0]][j]}", slots)
            trees[who[0]].append(grow(LIBRARY, fact, depth, ch, skill_banned, "gold", used))
    # Each pair's history goes in one chapter: (0, 1) → 0, (1, 2) → 1, (0, 2) → 2.
    team_pairs: dict[str, list[str]] = {}
    for a, b, owner in ((0, 1, 0), (1, 2, 1), (0, 2, 2)):
        team_pairs[people[owner]] = [people[a], people[b]]
        slots = {**person("p", cast[a]), **person("q", cast[b])}
        level = teamwork[pair_key(people[a], people[b])]
        trees[people[owner]].append(
            grow(LIBRARY, Fact(f"team{level}", slots), depth, ch, team_banned, "gold", used)
        )
    return {
        "setting": setting.intro,
        "leader": leader[0],
        "people": people,
        "genders": [c[1] for c in cast],
        "tasks": [job.name for job in setting.jobs],
        "skills": skills,
        "teamwork": teamwork,
        "options": options,
        "best": best,
        "margin": lead,
        "trees": trees,
        "team_pairs": team_pairs,
    }
