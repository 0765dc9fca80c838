"""Murder mysteries: the commonsense library, the gold facts F and the trees of each chapter.

F: two suspects; the murderer has means, motive and opportunity; the innocent has two of the
three. Both suspects also did something suspicious but irrelevant (a bare red herring, as in
the paper's own pool: never explained away, which would tell the innocent). Every chapter is
drawn from the same pools: one tree per element for both suspects. For the element the
innocent lacks, their tree is told in the very same wordings but misses the crime: the skills
of a trade that fits another weapon, a grudge that runs the other way (the victim against the
suspect), or hours near the scene that do not cover the time of death. Only reading the
relation tells the two apart (``benchmarks/musr.py``); for the motive the relation is the name
next to the grudge, which a bag of words reads once the suspects' names are masked (issue 41:
0.96 of the stories whose innocent lacks a motive; docs/tasks/musr.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...rng import Chooser
from .text import People, article, clock, person
from .trees import Expansion, Fact, Library, Node, Slots, banned_pattern, fact_type, grow

__all__ = ["BANNED", "ELEMENTS", "LIBRARY", "ODD_ACTS", "WEAPONS", "generate_murder", "odd_acts"]

ELEMENTS = ("means", "motive", "opportunity")


@dataclass(frozen=True)
class Weapon:
    name: str  # "a hunting knife"
    verb: str  # how the victim died, "stabbed with a hunting knife"
    jobs: tuple[tuple[str, str, str, str], ...]  # (job, uniform, workplace, what it does daily)
    hobbies: tuple[tuple[str, str], ...]  # (pastime, its club or group)


WEAPONS = (
    Weapon("a hunting knife", "stabbed with a hunting knife",
           (("butcher", "a blood-spotted apron", "the meat market on Grove Street", "cuts meat from the bone"),
            ("fishing guide", "rubber waders", "the harbour docks", "guts the day's catch")),
           (("wilderness survival", "the Ridge Valley survival club"), ("fly fishing", "the Clearwater anglers' group"))),
    Weapon("a revolver", "shot with a revolver",
           (("security guard", "a navy guard uniform", "the Meridian office tower", "carries a holstered sidearm"),
            ("police officer", "a pressed blue uniform", "the Fourth Precinct station", "trains at the firing range")),
           (("target shooting", "the Oak Hollow pistol club"), ("collecting antique firearms", "the Frontier Collectors' Society"))),
    Weapon("a length of rope", "strangled with a length of rope",
           (("climbing instructor", "a chalk-dusted harness", "the Summit climbing gym", "ties off belay ropes"),
            ("deckhand", "a salt-stained windbreaker", "the ferry terminal", "coils heavy mooring lines")),
           (("rock climbing", "the Granite Peaks climbing club"), ("sailing", "the Bayview yacht club"))),
    Weapon("arsenic", "poisoned with arsenic",
           (("pest-control technician", "a coverall with a company logo", "the Greenway exterminators' depot", "mixes rodent poison"),
            ("lab technician", "a white lab coat", "the university chemistry building", "measures out toxic reagents")),
           (("taxidermy", "the county taxidermy guild"), ("amateur chemistry", "the Basement Chemists' club"))),
    Weapon("a crowbar", "struck down with a crowbar",
           (("demolition worker", "a hard hat and an orange vest", "the old mill demolition site", "pries apart beams"),
            ("carpenter", "a canvas tool belt", "the Lindell furniture workshop", "pulls nails from old boards")),
           (("salvaging old barn wood", "the Reclaimed Timber collective"), ("urban exploring", "the Rust Belt explorers' club"))),
    Weapon("an axe", "killed with an axe",
           (("firefighter", "turnout gear", "Engine Company 12", "breaks down jammed doors"),
            ("tree surgeon", "a spiked climbing harness", "the parks department yard", "chops through fallen limbs")),
           (("splitting firewood", "the Pine Lake cabin owners' club"), ("lumberjack sports", "the county timber games team"))),
    Weapon("a sickle", "slashed with a sickle",
           (("farmhand", "mud-caked overalls", "the Hollis family farm", "cuts hay by hand"),
            ("groundskeeper", "a green estate uniform", "the Ashcombe estate", "cuts back the long grass by hand")),
           (("organic gardening", "the Eastside community garden"), ("cutting rushes for basket weaving", "the Riverside basket weavers"))),
    Weapon("an ice pick", "stabbed with an ice pick",
           (("bartender", "a black vest and bow tie", "the Velvet Room cocktail bar", "chips block ice for drinks"),
            ("ice sculptor", "insulated gloves", "the Frost & Form studio", "breaks up ice blocks for carving")),
           (("ice fishing", "the Lake Erie ice-fishing club"), ("mixing craft cocktails at home", "the Speakeasy cocktail society"))),
)  # fmt: skip

# Weapons whose trades or pastimes overlap (a tree surgeon climbs on ropes, a firefighter
# pries doors open, a survivalist carries an axe): the innocent's skills are never drawn
# from a weapon that could arguably give the means for the real one.
_OVERLAPS = frozenset(
    frozenset(pair)
    for pair in (
        ("a hunting knife", "an ice pick"), ("a hunting knife", "an axe"),
        ("a length of rope", "an axe"), ("a crowbar", "an axe"), ("a sickle", "an axe"),
    )
)  # fmt: skip

SCENES = (
    "the marina", "the community greenhouse", "the old Rialto theatre", "the parking garage on "
    "Fifth Street", "the bowling alley", "the library's archive room", "the ski lodge on Crest "
    "Road", "the rooftop bar", "the train depot", "the city aquarium", "the pottery studio", "the "
    "golf club's locker room", "the abandoned cannery", "the lakeside cabin", "the museum's loading "
    "dock", "the botanical garden", "the recording studio on Vine Street", "the county "
    "fairgrounds", "the observatory", "the wine cellar of the Hotel Marlow",
)  # fmt: skip
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
AMOUNTS = ("forty thousand dollars", "twelve thousand dollars", "sixty-five thousand dollars",
           "seventy thousand dollars", "nine thousand dollars", "one hundred thousand dollars")  # fmt: skip
SECRETS = ("had faked a nursing degree", "had served time for fraud under another name",
           "had been skimming money from the church charity fund", "had cheated on the bar exam",
           "had caused a hit-and-run years ago")  # fmt: skip
COMPANIES = ("Halvorsen Logistics", "the Brightwater Gazette", "Pinecrest Realty",
             "Norwood Insurance", "the Silver Spoon diner chain", "Castellan Engineering")  # fmt: skip
PARTNERS = ("husband", "wife", "fiancé", "fiancée", "partner")
COLLEAGUES = ("a coworker", "a former colleague", "a shift supervisor", "a long-time colleague")
# The suspicious but irrelevant facts (bare red herrings, in the spirit of the paper's pool:
# odd habits, never evidence of this crime and never explained away).
ODD_ACTS = (
    ("had been sneaking out of the house at night", "the night-time outings"),
    ("kept a scrapbook of newspaper crime stories", "the scrapbook of crime stories"),
    ("had used a false name at the gym", "the false name at the gym"),
    ("cleared the browser history every single evening", "the wiped browser history"),
    ("received letters from a prison inmate", "the letters from prison"),
    ("kept a packed suitcase by the front door", "the packed suitcase"),
    ("had been arrested for a bar fight years ago", "the old arrest"),
    ("paid for everything in cash", "the habit of paying cash"),
    ("had recently bought a second phone", "the second phone"),
    ("changed the locks twice in one month", "the changed locks"),
    ("kept a police scanner running at home", "the police scanner"),
    ("had been seen burning papers in the backyard", "the bonfire of papers"),
)  # fmt: skip


def odd_acts() -> list[str]:
    """The suspicious-fact pool's acts, as the story states them."""
    return [act for act, _ in ODD_ACTS]


def _weapon(slots: Slots) -> Weapon:
    return WEAPONS[int(slots["tool_index"])]


def _root(types: tuple[str, ...], on: str, off: str) -> Expansion:
    """A gold fact supported by ``types``; the commonsense that joins them reads ``on`` for
    the crime itself and ``off`` on an off-target tree."""

    def expand(slots: Slots, ch: Chooser) -> tuple[list[Fact], str]:
        return [Fact(t, slots) for t in types], off if slots.get("off") else on

    return expand


def _pair(*types: str, rule: str) -> Expansion:
    def expand(slots: Slots, ch: Chooser) -> tuple[list[Fact], str]:
        return [Fact(t, slots) for t in types], rule

    return expand


# -- means: the trade or pastime that makes someone at home with a weapon --------------------
def _with_job(expansion: Expansion) -> Expansion:
    """Draw one of the tool's trades into the slots before expanding."""

    def expand(slots: Slots, ch: Chooser) -> tuple[list[Fact], str]:
        job, uniform, workplace, use = _weapon(slots).jobs[int(slots["job_index"])]
        more = {"job": job, "a_job": article(job), "uniform": uniform, "workplace": workplace,
                "use": use, "colleague": ch.choice(COLLEAGUES)}  # fmt: skip
        return expansion({**slots, **more}, ch)

    return expand


def _with_hobby(expansion: Expansion) -> Expansion:
    def expand(slots: Slots, ch: Chooser) -> tuple[list[Fact], str]:
        hobby, club = _weapon(slots).hobbies[int(slots["hobby_index"])]
        return expansion({**slots, "hobby": hobby, "club": club}, ch)

    return expand


def _with_both(expansion: Expansion) -> Expansion:
    return _with_job(_with_hobby(expansion))


_means_trade = _with_job(_root(
    ("works_as", "handles"),
    on="Someone who {use} at work is at home with {tool}.",
    off="Someone who {use} at work is at home with {tool}, which is no help with {weapon}.",
))  # fmt: skip
_means_hobby = _with_hobby(_root(
    ("pastime", "competes"),
    on="Years of {hobby}, practised with a club, make someone at home with {tool}.",
    off="Years of {hobby} make someone at home with {tool}, which is not {weapon}.",
))  # fmt: skip
_means_deep = _with_both(_root(
    ("access", "skill"),
    on="Anyone who can get hold of {tool} and knows how to use it could have done what was "
    "done to {v}.",
    off="Being able to get hold of {tool} and use it says nothing about {weapon}.",
))  # fmt: skip


# -- motive: who wronged whom ({a} is the aggrieved one, {b} the one who wronged them) ------
def _motive(types: tuple[str, str], slot: str, pool: tuple[str, ...], rule: str) -> Expansion:
    """One of the four grudges (drawing the one detail it names: a sum, a secret, a company,
    a partner), with the rule for what it concludes: a motive under a motive, a grievance
    under a grievance."""

    def expand(slots: Slots, ch: Chooser) -> tuple[list[Fact], str]:
        more = {**slots, slot: ch.choice(pool)}
        return [Fact(t, more) for t in types], rule

    return expand


# (facts, the detail they name, the rule concluding a motive, the one concluding a grievance)
_GRUDGES = (
    (("debt", "demand"), "amount", AMOUNTS,
     "Someone pressed hard to repay a debt they cannot pay may want the lender gone.",
     "Someone pressed hard to repay a debt they cannot pay comes to resent the lender bitterly."),
    (("knew_secret", "threat"), "secret", SECRETS,
     "Someone about to have a ruinous secret exposed may want the one who knows it silenced.",
     "Someone about to have a ruinous secret exposed comes to hate the one who threatens it."),
    (("fired", "ruined"), "company", COMPANIES,
     "Someone whose livelihood another person destroyed may want revenge on that person.",
     "Someone whose livelihood another person destroyed holds a bitter grievance against them."),
    (("affair", "found_out"), "partner", PARTNERS,
     "Someone who learns that their partner is secretly seeing another person can turn "
     "violently jealous of that person.",
     "Someone who learns that their partner is secretly seeing another person holds a bitter "
     "grievance against that person."),
)  # fmt: skip
_MOTIVE = tuple(_motive(t, slot, pool, motive) for t, slot, pool, motive, _ in _GRUDGES)
_GRIEVANCE = tuple(_motive(t, slot, pool, grief) for t, slot, pool, _, grief in _GRUDGES)
_motive_deep = _pair(
    "grievance", "seething",
    rule="A bitter grievance that leaves a person seething can drive them to act against "
    "whoever caused it.",
)  # fmt: skip


# -- opportunity: near the scene, and for which hours ------------------------------------------
_opportunity_present = _pair(
    "near_scene", "alone",
    rule="Someone alone near {scene} from {from} to {to} could have slipped in unseen during "
    "those hours.",
)  # fmt: skip
_opportunity_key = _pair(
    "has_key", "near_scene",
    rule="Someone with a key to {scene} who was nearby from {from} to {to} could have walked "
    "in during those hours.",
)  # fmt: skip
_opportunity_deep = _pair(
    "could_reach", "unaccounted",
    rule="Someone who could get into {scene} from {from} to {to} and cannot account for those "
    "hours could have been there then.",
)  # fmt: skip


# -- the suspicious but irrelevant fact ----------------------------------------------------------
_suspicious = _pair(
    "odd_act", "furtive",
    rule="An odd habit kept quiet looks bad to an investigator, whatever its cause.",
)  # fmt: skip
_suspicious_deep = _pair(
    "odd_look", "gossip",
    rule="Odd behaviour the whole street talks about draws an investigator's eye.",
)  # fmt: skip


LIBRARY: Library = {
    # gold facts (their text is never stated in the story); the _off roots are the innocent's
    # tree for the element they lack, grown from the same expansions
    "means": fact_type("{s} had the means to kill {v} with {weapon}",
                exp=(_means_trade, _means_hobby), deep=(_means_deep,)),
    "means_off": fact_type("{s} is at home with {tool}, not with {weapon}, so {s} had no proven means",
                    exp=(_means_trade, _means_hobby), deep=(_means_deep,)),
    "motive": fact_type("{s} had a motive to kill {v}", exp=_MOTIVE, deep=(_motive_deep,)),
    "motive_off": fact_type("It was {v} who had reason to want {s} gone, not the other way round, "
                     "so {s} had no proven motive", exp=_MOTIVE, deep=(_motive_deep,)),
    "opportunity": fact_type("{s} had the opportunity to kill {v} at {scene} around {hour}",
                      exp=(_opportunity_present, _opportunity_key), deep=(_opportunity_deep,)),
    "opportunity_off": fact_type("{s} was near {scene} only from {from} to {to}, not around {hour}, "
                          "so {s} had no proven opportunity",
                          exp=(_opportunity_present, _opportunity_key), deep=(_opportunity_deep,)),
    "suspicious": fact_type("{s} did something suspicious: {s} {odd}", exp=(_suspicious,),
                     deep=(_suspicious_deep,)),
    # means
    "access": fact_type("{s} could get hold of {tool} whenever {s_they} liked",
                 exp=(_pair("works_as", "store_key", rule="Someone who works at {workplace} and holds "
                            "the key to its equipment store has {tool} within reach."),)),
    "skill": fact_type("{s} knows how to use {tool}", tense="now",
                exp=(_pair("pastime", "competes", rule="Years of {hobby}, practised with a club, "
                           "teach a steady hand with {tool}."),)),
    "works_as": fact_type("{s} works as {a_job} at {workplace}", "{s} has been {a_job} for years", tense="now",
                   exp=(_pair("wears", "commutes", rule="People who wear {uniform} and report to "
                              "{workplace} each morning usually work there."),
                        _pair("payslip", "colleague", rule="A payslip from an employer and a "
                              "coworker's word together show where someone works."))),
    "handles": fact_type("{s} {use} almost every day", "At work, {s} {use} as a matter of routine", tense="now",
                  exp=(_pair("certificate", "shift_log", rule="A certificate and a record of daily "
                             "shifts show that someone does the work regularly."),)),
    "store_key": fact_type("{s} holds a key to the equipment store at {workplace}",
                    "{s} is trusted with the store room key at {workplace}", tense="now",
                    exp=(_pair("key_log", "key_seen", rule="A sign-out sheet and a colleague's "
                               "account together show who holds a key."),)),
    "pastime": fact_type("{s} has been into {hobby} for years", "{s} is devoted to {hobby}", tense="now",
                  exp=(_pair("membership", "photos", rule="Paying dues to a club and posting photos "
                             "from its outings shows a real, regular hobby."),)),
    "competes": fact_type("{s} is one of the most active members of {club}", "{s} is a stalwart of {club}",
                   tense="now",
                   exp=(_pair("trophy", "practice", rule="Years of membership and weekly sessions mark "
                              "someone serious about a pastime."),)),
    "wears": fact_type("{s} is usually dressed in {uniform}", "{s} is rarely seen out of {uniform}", tense="now"),
    "commutes": fact_type("{s} drives to {workplace} most days", "{s}'s car is often parked outside {workplace}",
                   tense="now"),
    "payslip": fact_type("A payslip from {workplace} was lying on {s}'s kitchen table",
                  "{s} showed {d} a pay stub from {workplace}"),
    "colleague": fact_type("{colleague} who knows {s} said they had worked shifts together at {workplace}",
                    "At the diner, {colleague} greeted {s} as an old workmate from {workplace}"),
    "certificate": fact_type("A framed certificate from {a_job} training course hangs in {s}'s hallway",
                      "{s} keeps a licence from {a_job} course in {s_their} wallet", tense="now"),
    "shift_log": fact_type("The roster at {workplace} lists {s} on nearly every shift",
                    "{s}'s time card shows long weeks at {workplace}", tense="now"),
    "key_log": fact_type("The sign-out sheet at {workplace} had {s} keeping the store room key all month",
                  "{s}'s name was on the store room key tag at {workplace}"),
    "key_seen": fact_type("{colleague} from {workplace} said {s} was the one to ask for the store room key",
                   "At {workplace}, {colleague} said {s} opened the store room every morning"),
    "membership": fact_type("{s} pays yearly dues to {club}", "{s}'s name is on the roll of {club}", tense="now"),
    "photos": fact_type("{s}'s social media is full of photos from outings with {club}",
                 "A photo on {s}'s fridge shows {s} on a trip with {club}", tense="now"),
    "trophy": fact_type("A plaque from {club} thanking {s} for ten years of membership stands on {s_their} mantelpiece",
                 "{s} holds an honorary life membership of {club}", tense="now"),
    "practice": fact_type("{s} practises with {club} every week",
                   "{s} never misses a weekly session with {club}", tense="now"),
    # motive ({a} the aggrieved one, {b} the one who wronged them)
    "grievance": fact_type("{a} held a bitter grievance against {b}", "{a} had been badly wronged by {b}",
                    exp=_GRIEVANCE),
    "seething": fact_type("{a} was consumed by anger at {b}", "{a}'s resentment of {b} had been growing for months",
                   exp=(_pair("outburst", "sleepless", rule="Angry outbursts and sleepless nights show "
                              "a grudge that has taken hold."),)),
    "outburst": fact_type("{a} had lashed out about {b} in front of others", "{a} had lost {a_their} temper over {b} in public",
                   exp=(_pair("bar_remark", "wall_punch", rule="Threats voiced to strangers and sudden "
                              "violence are signs of a temper out of control."),)),
    "sleepless": fact_type("{a} had been losing sleep over {b}", "{a} could not stop brooding about {b}",
                    exp=(_pair("sister_says", "pacing", rule="Sleepless nights spent near someone's "
                               "home show an obsession with that person."),)),
    "bar_remark": fact_type("{a} was heard telling a bartender that {b} would get what was coming",
                     "At a bar, {a} told a stranger that {b} had ruined everything"),
    "wall_punch": fact_type("{a} punched a wall after a phone call with {b}, a coworker said",
                     "A coworker saw {a} hurl a mug across the break room after {b} called"),
    "sister_says": fact_type("{a}'s sister said {a_they} had barely slept for weeks because of {b}",
                      "{a}'s roommate often heard {a_them} pacing at three in the morning, muttering about {b}"),
    "pacing": fact_type("{a} had been seen pacing the street outside {b}'s building at night",
                 "A doorman noticed {a} loitering across from {b}'s home after dark"),
    "debt": fact_type("{a} had borrowed {amount} from {b}", "{a} owed {b} {amount}",
               exp=(_pair("transfer", "loan_note", rule="A bank transfer and a signed note for the "
                          "same sum record a loan."),)),
    "demand": fact_type("{b} was pressing {a} to repay the {amount} at once",
                 "{b} wanted the {amount} back from {a} immediately",
                 exp=(_pair("voicemail", "lawyer_letter", rule="Angry messages and a lawyer's letter "
                            "about the same money mean it is being demanded back."),)),
    "transfer": fact_type("Bank records showed {b} wiring {amount} to {a} two years earlier",
                   "A bank statement showed {amount} moving from {b}'s account to {a}'s"),
    "loan_note": fact_type("A note signed by {a}, promising to repay {b} {amount}, turned up in a desk drawer",
                    "{b}'s desk held an IOU for {amount} in {a}'s handwriting"),
    "voicemail": fact_type("{a}'s phone held three angry voicemails from {b} about the money",
                    "{b} had left {a} a voicemail saying {b_their} patience had run out"),
    "lawyer_letter": fact_type("A lawyer's letter sent for {b} had given {a} thirty days to pay",
                        "{a} had received a letter from {b}'s attorney about the {amount}"),
    "knew_secret": fact_type("{b} had found out that {a} {secret}", "{b} knew that {a} {secret}",
                      exp=(_pair("file_found", "bragged", rule="A person who keeps a file about someone "
                                 "and hints at what is in it knows their secret."),)),
    "threat": fact_type("{b} had been about to tell everyone that {a} {secret}",
                 "{b} had warned {a} that the truth would come out",
                 exp=(_pair("draft_email", "quarrel", rule="An unsent message to a newspaper and a "
                            "shouted warning mean a secret was about to come out."),)),
    "file_found": fact_type("In {b}'s apartment there was a folder of clippings about {a}'s past",
                     "{b} kept a folder labelled with {a}'s name, full of old records"),
    "bragged": fact_type("{b} had hinted at a dinner party that {a} was not who everyone thought",
                  "A friend heard {b} joke that {a} had a past worth reading about"),
    "draft_email": fact_type("{b}'s laptop held an unsent email to a reporter with {a}'s name in the subject line",
                      "An unsent message to the local paper about {a} was found on {b}'s laptop"),
    "quarrel": fact_type("Neighbours heard {b} shout at {a}: 'Next week everyone will know!'",
                  "A waiter saw {b} slam a folder on the table in front of {a}"),
    "fired": fact_type("{b} had got {a} fired from {company}", "{a} had lost a job at {company} because of {b}",
                exp=(_pair("hr_memo", "coworker_fired", rule="A memo signed by a manager and a coworker's "
                           "account of the same day show who caused a dismissal."),)),
    "ruined": fact_type("{a} lost nearly everything after {b} cost {a_them} that job",
                 "{a}'s life fell apart after {b} had {a_them} dismissed",
                 exp=(_pair("foreclosure", "moved_in", rule="Losing one's home and moving onto a "
                            "relative's couch is a sign of ruin."),)),
    "hr_memo": fact_type("A memo from {company}'s files, signed by {b}, recommended dismissing {a}",
                  "{b}'s signature was on the dismissal papers for {a} at {company}"),
    "coworker_fired": fact_type("A former coworker at {company} said {b} had walked {a} out of the building personally",
                         "A coworker remembered {b} boxing up {a}'s desk at {company}"),
    "foreclosure": fact_type("The bank foreclosed on {a}'s house a few months after {b} had {a_them} fired",
                      "{a}'s house was sold at auction the year {b} cost {a_them} the job at {company}"),
    "moved_in": fact_type("Since {b} got {a_them} fired, {a} had been sleeping on {a_their} sister's couch",
                   "{a} lived out of a car for a while after {b} had {a_them} fired"),
    "affair": fact_type("{b} had been secretly seeing {a}'s {partner}", "{a}'s {partner} and {b} had been having an affair",
                 exp=(_pair("hotel", "dinners", rule="Two people who share hotel rooms and candlelit "
                            "dinners in secret are involved."),)),
    "found_out": fact_type("{a} had recently discovered the affair with {b}", "{a} had found out about {b} and the {partner} a week earlier",
                    exp=(_pair("phone_checked", "scene_at_home", rule="Someone who reads a partner's "
                               "messages and then erupts at home has learned something painful."),)),
    "hotel": fact_type("A hotel clerk identified {b} and {a}'s {partner} as a couple who had checked in together twice",
                "Hotel receipts in {b}'s car listed two guests, one of them {a}'s {partner}"),
    "dinners": fact_type("A waiter remembered {b} holding hands with {a}'s {partner} over a candlelit dinner",
                  "{b} and {a}'s {partner} had been seen dining alone at a quiet bistro out of town"),
    "phone_checked": fact_type("{a} had found messages from {b} on {a_their} {partner}'s phone one night",
                        "{a} had gone through {a_their} {partner}'s phone and found {b}'s name everywhere"),
    "scene_at_home": fact_type("The night {a} learned about {b}, the neighbours heard dishes smashing in {a_their} kitchen",
                        "The morning after finding out about {b}, {a} threw {a_their} {partner}'s clothes onto the lawn"),
    # opportunity (every hour-bearing wording uses the tree's own window {from}-{to})
    "could_reach": fact_type("{s} could get into {scene} between {from} and {to}",
                      exp=(_pair("near_scene", "has_key", rule="Someone close to {scene} who holds "
                                 "its key can walk right in."),)),
    "unaccounted": fact_type("Nobody knows where {s} was from {from} to {to}",
                      exp=(_pair("alone", "no_alibi", rule="Someone alone whose story for those "
                                 "hours cannot be checked has no alibi for them."),)),
    "near_scene": fact_type("{s} was near {scene} from {from} to {to}", "{s} was close to {scene} between {from} and {to}",
                     exp=(_pair("parking", "phone_ping", rule="A parked car and a phone signal in "
                                "the same place put their owner there."),)),
    "alone": fact_type("{s} was on {s_their} own from {from} to {to}", "Nobody was with {s} between {from} and {to}",
                exp=(_pair("cancelled_plans", "car_gone", rule="Someone who cancels plans and leaves "
                           "home is out on their own."),)),
    "has_key": fact_type("{s} had a key to {scene}", "{s} could let {s_self} into {scene} at any hour",
                  exp=(_pair("key_copy", "key_ring", rule="A copied key that turns up on someone's "
                             "own key ring is in their possession."),)),
    "no_alibi": fact_type("No one could vouch for {s} from {from} to {to}", "{s} could not account for the hours from {from} to {to}",
                   exp=(_pair("story_changed", "alibi_failed", rule="A story that changes and a check "
                              "that fails leave a person unaccounted for."),)),
    "parking": fact_type("A parking ticket was written for {s}'s car on the street beside {scene} at {at}",
                  "A traffic camera caught {s}'s car turning into the lot at {scene} at {at}"),
    "phone_ping": fact_type("Phone records placed {s}'s phone beside {scene} from {from} to {to}",
                     "{s}'s phone connected to the cell tower next to {scene} between {from} and {to}"),
    "cancelled_plans": fact_type("{s} cancelled plans with friends at the last minute that day",
                          "{s} told {s_their} bowling league that {s_they} would skip that week's game"),
    "car_gone": fact_type("A neighbour said {s}'s car was gone from the driveway from {from} to {to}",
                   "{s}'s dog barked alone in the house from {from} to {to}, the neighbours said"),
    "key_copy": fact_type("A locksmith's records showed a key to {scene} cut for {s} the month before",
                   "{s} had paid a hardware store to copy a key to {scene}"),
    "key_ring": fact_type("{d} noticed a key tagged with the name of {scene} on {s}'s key ring",
                   "A key marked for {scene} dangled from {s}'s key ring"),
    "story_changed": fact_type("{s} gave {d} two different accounts of where {s_they} had been from {from} to {to}",
                        "{s} first said {s_they} had been at home from {from} to {to}, then said {s_they} had been out driving"),
    "alibi_failed": fact_type("The friend {s} named as company from {from} to {to} said they had not met that day",
                       "The gym's door log showed no visit by {s} between {from} and {to}, though {s} claimed to have been there"),
    # the suspicious fact
    "odd_look": fact_type("{s} was behaving strangely", "{s}'s conduct raised eyebrows",
                   exp=(_pair("odd_act", "furtive", rule="Doing something odd while trying not to "
                              "be noticed looks bad."),)),
    "odd_act": fact_type("{s} {odd}", "People had noticed that {s} {odd}",
                  exp=(_pair("odd_witness", "odd_second", rule="Two witnesses who say the same "
                             "thing are usually right."),)),
    "furtive": fact_type("{s} seemed keen to keep {odd_noun} quiet", "{s} did not want {odd_noun} talked about",
                  exp=(_pair("odd_hush", "nervous", rule="Telling no one and squirming when asked "
                             "looks like hiding something."),)),
    "gossip": fact_type("People in the neighbourhood had started to talk about {s}",
                 exp=(_pair("gossip_shop", "gossip_withdrawn", rule="Neighbours talk about someone "
                            "who is seen less and whispered about more."),)),
    "odd_witness": fact_type("A neighbour told {d} that {s} {odd}", "{d} heard from a neighbour that {s} {odd}"),
    "odd_second": fact_type("{s}'s coworker knew about {odd_noun} too", "{s}'s landlord brought up {odd_noun} unprompted"),
    "odd_hush": fact_type("{s} had never mentioned {odd_noun} to anyone", "{s}'s own family knew nothing about {odd_noun}"),
    "nervous": fact_type("{s} changed the subject when {d} brought up {odd_noun}", "{s} stammered when {d} asked about {odd_noun}"),
    "gossip_shop": fact_type("{s}'s name came up twice at the corner shop while {d} was there",
                      "Two neighbours stopped {d} in the street to ask about {s}"),
    "gossip_withdrawn": fact_type("{s} had stopped going to the neighbourhood barbecues",
                           "{s} had been keeping to {s_self} more and more"),
}  # fmt: skip

# Validators: below each gold fact these words may not appear (the reader must infer it).
BANNED: Mapping[str, tuple[str, ...]] = {
    "means": ("means", "murder weapon", "murder", "murderer", "killer", "kill"),
    "motive": ("motive", "motives", "murder", "murderer", "killer", "kill"),
    "opportunity": ("opportunity", "murder", "murderer", "killer", "kill", "crime scene"),
    "suspicious": ("suspicious", "murder", "murderer", "killer", "kill", "innocent"),
}


def _window(ch: Chooser, hour: int, on: bool) -> dict[str, str]:
    """Hours near the scene: a window of two or three hours around the time of death
    (``on``), else one that ends or starts at least two hours away from it. On a 24-hour
    clock with the hour of death drawn uniformly, both kinds of window are uniform too, so
    the hours a chapter names say nothing by themselves."""
    length = ch.randint(2, 3)
    if on:
        start = hour - ch.randint(1, length - 1)
        at = hour + ch.choice((-1, 1))  # a sighting an hour from the time itself, never at it
    else:
        start = hour + ch.randint(2, 7) if ch.random() < 0.5 else hour - length - ch.randint(2, 7)
        at = start + ch.randint(0, length)
    return {"from": clock(start), "to": clock(start + length), "at": clock(at)}


def generate_murder(ch: Chooser, depth: int, names: People) -> dict[str, Any]:
    """F and the trees: two suspects (one the murderer), victim, scene, weapon, detective."""
    victim, detective, s1, s2 = ch.sample(names, 4)
    weapon_index = ch.randint(0, len(WEAPONS) - 1)
    weapon = WEAPONS[weapon_index]
    scene, day, hour = ch.choice(SCENES), ch.choice(DAYS), ch.randint(0, 23)
    murderer = ch.randint(0, 1)
    odd = ch.sample(ODD_ACTS, 2)
    others = [k for k, w in enumerate(WEAPONS)
              if k != weapon_index and frozenset((w.name, weapon.name)) not in _OVERLAPS]  # fmt: skip
    used: set[str] = set()  # no statement twice in one story
    # Two suspects at home with the same weapon get different trades and pastimes.
    jobs, hobbies = ch.sample((0, 1), 2), ch.sample((0, 1), 2)
    suspects: list[dict[str, Any]] = []
    for k, name in enumerate((s1, s2)):
        missing = None if k == murderer else ch.choice(ELEMENTS)
        base = {**person("s", name), **person("v", victim), "d": f"Detective {detective[0]}",
                "weapon": weapon.name, "scene": scene, "hour": clock(hour)}  # fmt: skip
        trees: dict[str, Node] = {}
        for element in ELEMENTS:
            off = element == missing
            slots = dict(base, off="1" if off else "")
            if element == "means":
                tool = ch.choice(others) if off else weapon_index
                slots.update(
                    tool=WEAPONS[tool].name,
                    tool_index=str(tool),
                    job_index=str(jobs[k]),
                    hobby_index=str(hobbies[k]),
                )
            elif element == "motive":  # the grudge runs from {a} to {b}
                a, b = (victim, name) if off else (name, victim)
                slots.update(person("a", a), **person("b", b))
            else:
                slots.update(_window(ch, hour, not off))
            kind = element + ("_off" if off else "")
            trees[element] = grow(LIBRARY, Fact(kind, slots), depth, ch,
                                  banned_pattern(BANNED[element]), "gold", used)  # fmt: skip
        act, noun = odd[k]
        trees["suspicious"] = grow(LIBRARY, Fact("suspicious", {**base, "odd": act, "odd_noun": noun}),
                                   depth, ch, banned_pattern(BANNED["suspicious"]), "gold", used)  # fmt: skip
        suspects.append({"name": name[0], "gender": name[1],
                         **{e: e != missing for e in ELEMENTS}, "trees": trees})  # fmt: skip
    return {
        "victim": victim[0],
        "detective": detective[0],
        "scene": scene,
        "day": day,
        "hour": clock(hour),
        "weapon": weapon.name,
        "verb": weapon.verb,
        "suspects": suspects,
        "murderer": murderer,
    }
