"""Murder mysteries: the commonsense library, the gold facts F and the chaptered story.

F: two suspects; the murderer has means, motive and opportunity; the innocent has two of the
three and a suspicious but irrelevant fact. Each fact is grown into a reasoning tree from the
library below (our own text), and each suspect's leaves become that suspect's chapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...rng import Chooser
from .text import People, article, person
from .trees import Fact, Library, Node, Slots, banned_pattern, fact_type, grow, supports

__all__ = ["ELEMENTS", "LIBRARY", "WEAPONS", "generate_murder"]

ELEMENTS = ("means", "motive", "opportunity")


@dataclass(frozen=True)
class Weapon:
    name: str
    verb: str  # how the victim died, "stabbed with a hunting knife"
    jobs: tuple[tuple[str, str, str, str], ...]  # (job, uniform, workplace, daily use)
    hobbies: tuple[tuple[str, str], ...]  # (pastime, its club or group)
    store: str


WEAPONS = (
    Weapon("a hunting knife", "stabbed with a hunting knife",
           (("butcher", "a blood-spotted apron", "the meat market on Grove Street", "cuts meat from the bone"),
            ("fishing guide", "rubber waders", "the harbor docks", "guts the morning's catch")),
           (("deer hunting", "the Ridge Valley Hunt Club"), ("fly fishing", "the Clearwater anglers' group")),
           "an outdoor supply store"),
    Weapon("a revolver", "shot with a revolver",
           (("security guard", "a navy guard uniform", "the Meridian office tower", "carries a holstered sidearm"),
            ("police officer", "a pressed blue uniform", "the Fourth Precinct station", "qualifies at the firing range")),
           (("target shooting", "the Oak Hollow shooting range"), ("antique firearm collecting", "the Frontier Collectors' Society")),
           "a licensed gun shop"),
    Weapon("a length of climbing rope", "strangled with a length of climbing rope",
           (("climbing instructor", "a chalk-dusted harness", "the Summit climbing gym", "ties off belay knots"),
            ("deckhand", "a salt-stained windbreaker", "the ferry terminal", "coils mooring lines")),
           (("rock climbing", "the Granite Peaks climbing club"), ("sailing", "the Bayview yacht club")),
           "a mountaineering shop"),
    Weapon("arsenic", "poisoned with arsenic",
           (("pest-control technician", "a coverall with a company logo", "the Greenway exterminators' depot", "mixes rodent bait"),
            ("lab technician", "a white lab coat", "the university chemistry building", "measures out toxic reagents")),
           (("restoring antique wallpaper", "the Heritage Homes restoration circle"), ("taxidermy", "the county taxidermy guild")),
           "a chemical supply company"),
    Weapon("a crowbar", "struck down with a crowbar",
           (("demolition worker", "a hard hat and orange vest", "the old mill demolition site", "pries apart beams"),
            ("carpenter", "a canvas tool belt", "the Lindell furniture workshop", "pulls nails from old boards")),
           (("salvaging old barn wood", "the Reclaimed Timber collective"), ("urban exploring", "an urban-exploration forum")),
           "a hardware store"),
    Weapon("a fire axe", "killed with a fire axe",
           (("firefighter", "turnout gear", "Engine Company 12", "breaks down jammed doors"),
            ("tree surgeon", "a spiked climbing harness", "the parks department yard", "chops through fallen limbs")),
           (("splitting firewood", "the Pine Lake cabin owners' club"), ("lumberjack sports", "the county timber games team")),
           "a farm supply store"),
    Weapon("a sickle", "slashed with a sickle",
           (("farmhand", "mud-caked overalls", "the Hollis family farm", "cuts hay by hand"),
            ("groundskeeper", "a green estate uniform", "the Ashcombe estate", "clears the overgrown hedges")),
           (("organic gardening", "the Eastside community garden"), ("historical reenactment", "the Harvest Fair reenactors")),
           "a garden center"),
    Weapon("an ice pick", "stabbed with an ice pick",
           (("bartender", "a black vest and bow tie", "the Velvet Room cocktail bar", "chips block ice for drinks"),
            ("ice sculptor", "insulated gloves", "the Frost & Form studio", "carves ice blocks")),
           (("mountaineering", "the Alpine Society"), ("ice fishing", "the Lake Erie ice-fishing club")),
           "a restaurant supply shop"),
)  # fmt: skip

SCENES = (
    "the marina", "the community greenhouse", "the old Rialto theatre", "a parking garage on Fifth "
    "Street", "the bowling alley", "the library's archive room", "a ski lodge", "the rooftop bar",
    "the train depot", "the city aquarium", "the pottery studio", "the golf club's locker room",
    "the abandoned cannery", "a lakeside cabin", "the museum's loading dock", "the botanical "
    "garden", "a recording studio", "the county fairgrounds", "the observatory", "a wine cellar",
)  # fmt: skip
TIMES = ("around midnight", "late on Friday evening", "just before dawn", "during the Sunday "
         "brunch rush", "on a stormy Tuesday night", "in the early afternoon", "shortly after "
         "closing time", "on New Year's Eve")  # fmt: skip
RELATIVES = ("grandfather", "uncle", "aunt", "older brother", "godmother", "father")
SPOTS = ("in a locked cabinet in the garage", "in the trunk of an old sedan", "on a rack in "
         "the basement", "in a toolbox under the porch", "behind the seat of a pickup truck",
         "in a cedar chest in the hallway")  # fmt: skip
AMOUNTS = ("forty thousand dollars", "twelve thousand dollars", "sixty-five thousand dollars",
           "seventy thousand dollars", "nine thousand dollars", "a hundred thousand dollars")  # fmt: skip
SECRETS = ("had faked a nursing degree", "had served time for fraud under another name",
           "was skimming money from the church charity fund", "had cheated on the bar exam",
           "had caused a hit-and-run years ago")  # fmt: skip
COMPANIES = ("Halvorsen Logistics", "the Brightwater Gazette", "Pinecrest Realty",
             "Norwood Insurance", "the Silver Spoon diner chain", "Castellan Engineering")  # fmt: skip
SUSPICIOUS = (
    ("was seen buying a large bag of lime at midnight", "was sealing an old outhouse pit before the county inspection",
     "had a letter from the county about a failed inspection", "the bag of lime"),
    ("burned a stack of papers in the backyard", "was destroying old tax records from a closed business",
     "had boxes labelled 'shred' stacked by the fire pit", "the bonfire of papers"),
    ("had a fake passport hidden in a sock drawer", "kept a prop passport from a community play",
     "acted in the Players' Guild production of a spy comedy", "the fake passport"),
    ("was overheard threatening someone on the phone", "was arguing with a contractor who had vanished with a deposit",
     "had filed a small-claims case against a roofer", "the threatening phone call"),
    ("scrubbed the car's trunk with bleach", "had spilled a gallon of paint in the trunk",
     "had bought a gallon of red barn paint that week", "the bleached trunk"),
    ("withdrew a large sum of cash the day before", "was paying a used-car dealer who only takes cash",
     "had been browsing car listings for weeks", "the cash withdrawal"),
)  # fmt: skip


def _pick(ch: Chooser, values: tuple[str, ...]) -> str:
    return ch.choice(values)


def _weapon(slots: Slots) -> Weapon:
    return WEAPONS[int(slots["weapon_index"])]


# -- means -------------------------------------------------------------------------------------
def _means_trade(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    job, uniform, workplace, use = ch.choice(_weapon(s).jobs)
    more = {
        "job": job,
        "a_job": article(job),
        "uniform": uniform,
        "workplace": workplace,
        "use": use,
    }
    return (
        [Fact("works_as", {**s, **more}), Fact("handles", {**s, **more})],
        "Someone who {use} at work handles tools like {weapon} every day and keeps them within reach.",
    )  # fmt: skip


def _means_hobby(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    hobby, club = ch.choice(_weapon(s).hobbies)
    more = {"hobby": hobby, "club": club, "store": _weapon(s).store}
    return (
        [Fact("pastime", {**s, **more}), Fact("owns", {**s, **more})],
        "Someone who owns {weapon} for {hobby} knows how to handle it.",
    )


def _means_inherited(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    more = {"relative": _pick(ch, RELATIVES), "spot": _pick(ch, SPOTS)}
    return (
        [Fact("inherited", {**s, **more}), Fact("keeps", {**s, **more})],
        "A keepsake that sits in someone's own home is theirs to pick up whenever they like.",
    )


_works_as_seen = supports(
    "wears",
    "commutes",
    rule="People who wear {uniform} and report to {workplace} each morning are usually employed there.",
)


def _works_as_colleague(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    more = {
        "colleague": _pick(
            ch, ("a cashier", "a retired foreman", "a night-shift nurse", "a mail carrier")
        )
    }
    return (
        [Fact("payslip", {**s, **more}), Fact("colleague", {**s, **more})],
        "A payslip from an employer and a coworker's word together show where someone works.",
    )  # fmt: skip


_handles_training = supports(
    "certificate",
    "shift_log",
    rule="A certificate and a record of daily shifts show that someone does the work regularly.",
)


_pastime_club = supports(
    "membership",
    "photos",
    rule="Paying dues to a club and posting photos from its outings shows a real, regular hobby.",
)


_owns_bought = supports(
    "receipt",
    "clerk",
    rule="A receipt found among someone's things, confirmed by the shop, shows they bought the item.",
)


_inherited_will = supports(
    "estate_list",
    "cousin",
    rule="What an estate list names for a person, and relatives saw handed over, became theirs.",
)


_keeps_seen = supports(
    "guest_saw",
    "dusty_shelf",
    rule="What a visitor saw in a house months ago and still sits in place is kept there.",
)


# -- motive ------------------------------------------------------------------------------------
def _motive_money(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    more = {"amount": _pick(ch, AMOUNTS)}
    return (
        [Fact("debt", {**s, **more}), Fact("demand", {**s, **more})],
        "A person who cannot repay a large debt to someone pressing for it can become desperate "
        "enough to silence the lender.",
    )


def _motive_secret(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    more = {"secret": _pick(ch, SECRETS)}
    return (
        [Fact("knew_secret", {**s, **more}), Fact("threat", {**s, **more})],
        "Someone facing exposure of a ruinous secret gains a great deal if the one person who "
        "knows it can no longer speak.",
    )


def _motive_revenge(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    more = {"company": _pick(ch, COMPANIES)}
    return (
        [Fact("fired", {**s, **more}), Fact("ruined", {**s, **more})],
        "A person whose livelihood was destroyed by someone may nurse a deep wish for revenge.",
    )


def _motive_jealousy(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    more = {"partner": _pick(ch, ("husband", "wife", "fiancé", "fiancée", "partner"))}
    return (
        [Fact("affair", {**s, **more}), Fact("found_out", {**s, **more})],
        "Discovering that one's partner is secretly involved with someone can turn into violent jealousy.",
    )  # fmt: skip


_debt_records = supports(
    "transfer",
    "loan_note",
    rule="A bank transfer and a signed note for the same sum record a loan.",
)


_demand_messages = supports(
    "voicemail",
    "lawyer_letter",
    rule="Angry messages and a lawyer's letter about the same money mean it is being demanded back.",
)


_secret_evidence = supports(
    "file_found",
    "bragged",
    rule="A person who keeps a file about someone and hints at what is in it knows their secret.",
)


_threat_evidence = supports(
    "draft_email",
    "quarrel",
    rule="An unsent message to a newspaper and a shouted warning mean a secret was about to come out.",
)


_fired_evidence = supports(
    "hr_memo",
    "coworker_fired",
    rule="A memo signed by a manager and a coworker's account of the same day show who caused a dismissal.",
)


_ruined_evidence = supports(
    "foreclosure",
    "moved_in",
    rule="Losing one's home and moving onto a relative's couch is a sign of ruin.",
)


_affair_evidence = supports(
    "hotel",
    "dinners",
    rule="Two people who share hotel rooms and candlelit dinners in secret are involved.",
)


_found_out_evidence = supports(
    "phone_checked",
    "scene_at_home",
    rule="Someone who reads a partner's messages and then breaks dishes that night has learned something painful.",
)


# -- opportunity -------------------------------------------------------------------------------
_opportunity_present = supports(
    "near_scene",
    "alone",
    rule="Anyone alone near {scene} {time} could have reached {v} without being seen.",
)


_opportunity_key = supports(
    "has_key",
    "no_alibi",
    rule="A person with a key to {scene} and no account of themselves {time} could have been there.",
)


_near_records = supports(
    "parking",
    "phone_ping",
    rule="A parked car and a phone signal in the same place put their owner there.",
)


_alone_records = supports(
    "cancelled_plans",
    "empty_house",
    rule="Someone who cancels plans and whose home stands dark and empty is out on their own.",
)


_key_records = supports(
    "key_copy",
    "key_ring",
    rule="A copied key that turns up on someone's own key ring is in their possession.",
)


_no_alibi_records = supports(
    "story_changed",
    "alibi_failed",
    rule="A story that changes and a witness who cannot back it up leave a person unaccounted for.",
)


# -- the innocent's suspicious but irrelevant fact -----------------------------------------------
_suspicious_explained = supports(
    "odd_act",
    "odd_reason",
    rule="Odd behaviour that has a dull everyday cause still looks bad to an investigator.",
)


# -- the deeper first steps (levels with depth 3) ---------------------------------------------
_means_deep = supports(
    "access",
    "skill",
    rule="Anyone who can lay hands on {weapon} and knows how to use it could have done what was done to {v}.",
)


def _access_owned(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    more = {"store": _weapon(s).store, "spot": _pick(ch, SPOTS)}
    return (
        [Fact("owns", {**s, **more}), Fact("keeps", {**s, **more})],
        "Something a person owns and keeps at home can be picked up at any time.",
    )


def _access_inherited(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    children, _ = _means_inherited(s, ch)
    return (
        children,
        "A keepsake that sits in someone's own home is theirs to pick up whenever they like.",
    )


def _skill_trade(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    return _means_trade(s, ch)


def _skill_hobby(s: Slots, ch: Chooser) -> tuple[list[Fact], str]:
    hobby, club = ch.choice(_weapon(s).hobbies)
    more = {"hobby": hobby, "club": club}
    return (
        [Fact("pastime", {**s, **more}), Fact("competes", {**s, **more})],
        "Years of {hobby} with regular practice teach a steady hand with {weapon}.",
    )


_competes_evidence = supports(
    "trophy", "practice", rule="Trophies and weekly practice mark someone who competes seriously."
)


_motive_deep = supports(
    "grievance",
    "seething",
    rule="A grievance that leaves a person seething is exactly what drives someone to act against another.",
)


_seething_signs = supports(
    "outburst",
    "sleepless",
    rule="Angry outbursts and sleepless nights show a grudge that has taken hold.",
)


_outburst_signs = supports(
    "bar_remark",
    "wall_punch",
    rule="Threats voiced to strangers and sudden violence are signs of a temper out of control.",
)


_sleepless_signs = supports(
    "sister_says",
    "pacing",
    rule="Sleepless nights spent near someone's home show an obsession with that person.",
)


_opportunity_deep = supports(
    "could_reach",
    "unaccounted",
    rule="Someone who could get to {scene} {time} and whom nobody can place elsewhere could have reached {v}.",
)


_could_reach = supports(
    "near_scene", "has_key", rule="A person close by who holds a key can walk right in."
)


_unaccounted = supports(
    "alone",
    "no_alibi",
    rule="Someone alone whose story cannot be checked has no alibi worth the name.",
)


_suspicious_deep = supports(
    "odd_look",
    "harmless",
    rule="Behaviour that looks furtive draws an investigator's eye, even when its cause turns out to be dull.",
)


_odd_look = supports(
    "odd_act", "furtive", rule="Doing something odd while trying not to be noticed looks bad."
)


_harmless = supports(
    "odd_reason",
    "paperwork",
    rule="A plain explanation backed by papers settles what really happened.",
)


_odd_act_seen = supports(
    "odd_witness", "odd_time", rule="A neighbour's account, placed in time, is usually reliable."
)


_furtive_signs = supports(
    "odd_hour",
    "nervous",
    rule="Acting at night and squirming when asked about it looks like hiding something.",
)


_odd_reason_detail = supports(
    "odd_detail", "odd_detail_more", rule="Everyday chores leave everyday traces."
)


_paperwork_detail = supports(
    "odd_proof", "odd_proof_more", rule="Dated papers and a clerk's memory confirm an errand."
)


LIBRARY: Library = {
    # gold facts (their text is never stated in the story)
    "means": fact_type("{s} had the means to kill {v} with {weapon}",
                exp=(_means_trade, _means_hobby, _means_inherited), deep=(_means_deep,)),
    "motive": fact_type("{s} had a motive to kill {v}",
                 exp=(_motive_money, _motive_secret, _motive_revenge, _motive_jealousy),
                 deep=(_motive_deep,)),
    "opportunity": fact_type("{s} had the opportunity to kill {v} at {scene}",
                      exp=(_opportunity_present, _opportunity_key), deep=(_opportunity_deep,)),
    "suspicious": fact_type("{s} did something suspicious: {s} {odd}", exp=(_suspicious_explained,),
                     deep=(_suspicious_deep,)),
    # the deeper first steps
    "access": fact_type("{s} could get hold of {weapon} whenever {s_they} wanted",
                 "{weapon} was within {s}'s reach", exp=(_access_owned, _access_inherited)),
    "skill": fact_type("{s} knows how to handle {weapon}", "{s} is practised with tools like {weapon}",
                exp=(_skill_trade, _skill_hobby)),
    "competes": fact_type("{s} competes with {club}", "{s} takes part in contests held by {club}",
                   exp=(_competes_evidence,)),
    "trophy": fact_type("A trophy from {club} stands on {s}'s mantelpiece",
                 "{s}'s hallway is lined with ribbons won with {club}"),
    "practice": fact_type("{s} practises with {club} every Saturday morning",
                   "{s} never misses a Saturday session with {club}"),
    "grievance": fact_type("{s} held a bitter grievance against {v}", "{s} had been badly wronged by {v}",
                    exp=(_motive_money, _motive_secret, _motive_revenge, _motive_jealousy)),
    "seething": fact_type("{s} was consumed by anger at {v}", "{s}'s resentment of {v} had been growing for months",
                   exp=(_seething_signs,)),
    "outburst": fact_type("{s} has lashed out about {v} in front of others", "{s} lost {s_their} temper over {v} in public",
                   exp=(_outburst_signs,)),
    "sleepless": fact_type("{s} has been losing sleep over {v}", "{s} cannot stop brooding about {v}",
                    exp=(_sleepless_signs,)),
    "bar_remark": fact_type("{s} was heard telling a bartender that {v} would get what was coming",
                     "At a bar, {s} told a stranger that {v} had ruined everything"),
    "wall_punch": fact_type("{s} punched a wall after a phone call with {v}, a coworker said",
                     "A coworker saw {s} hurl a mug across the break room after {v} called"),
    "sister_says": fact_type("{s}'s sister says {s_they} has barely slept for weeks",
                      "{s}'s roommate hears {s_them} up and pacing at three in the morning"),
    "pacing": fact_type("{s} has been seen pacing the street outside {v}'s building at night",
                 "A doorman noticed {s} loitering across from {v}'s home after dark"),
    "could_reach": fact_type("{s} could get into {scene} {time}", "{s} was able to reach {scene} {time}",
                      exp=(_could_reach,)),
    "unaccounted": fact_type("Nobody knows where {s} was {time}", "{s} is unaccounted for {time}",
                      exp=(_unaccounted,)),
    "odd_look": fact_type("{s} was behaving strangely that week", "{s}'s conduct that week raised eyebrows",
                   exp=(_odd_look,)),
    "harmless": fact_type("{s}'s odd behaviour had an ordinary cause", "There was a dull explanation for what {s} did",
                   exp=(_harmless,)),
    "furtive": fact_type("{s} seemed to want no witnesses", "{s} acted as if hoping not to be seen",
                  exp=(_furtive_signs,)),
    "paperwork": fact_type("{s} had papers to back up {s_their} explanation", "{s}'s explanation could be checked",
                    exp=(_paperwork_detail,)),
    "odd_time": fact_type("{odd_noun} came only days before {v} was found", "{odd_noun} fell in the same week {v} died"),
    "odd_hour": fact_type("{s} made sure nobody was around at the time of {odd_noun}",
                   "{s} kept {odd_noun} from the family, the neighbours said"),
    "nervous": fact_type("{s} stammered when {d} asked about {odd_noun}",
                  "{s} changed the subject twice when {d} brought up {odd_noun}"),
    "odd_detail_more": fact_type("{s} had mentioned the chore behind {odd_noun} to a neighbour weeks earlier",
                          "{s}'s calendar had the errand behind {odd_noun} marked for that week"),
    "odd_proof": fact_type("{s} showed {d} a dated receipt that explained {odd_noun}",
                    "{s} produced a dated invoice explaining {odd_noun} without being asked"),
    "odd_proof_more": fact_type("A clerk in town confirmed {s}'s account of {odd_noun}",
                         "The shop {s} named still had a record matching {s_their} account of {odd_noun}"),
    # means
    "works_as": fact_type("{s} works as {a_job} at {workplace}", "{s} has been {a_job} for years",
                   exp=(_works_as_seen, _works_as_colleague)),
    "handles": fact_type("{s} {use} almost every day", "At work, {s} {use} as a matter of routine",
                  exp=(_handles_training,)),
    "pastime": fact_type("{s} has spent years on {hobby}", "{s} is devoted to {hobby}", exp=(_pastime_club,)),
    "owns": fact_type("{s} owns {weapon}", "{weapon} belongs to {s}", exp=(_owns_bought,)),
    "inherited": fact_type("{s} inherited {weapon} from {s_their} {relative}",
                    "{weapon} came to {s} when {s_their} {relative} died", exp=(_inherited_will,)),
    "keeps": fact_type("{s} keeps {weapon} {spot}", "{weapon} is stored {spot} at {s}'s house", exp=(_keeps_seen,)),
    "wears": fact_type("{s} is usually dressed in {uniform}", "{s} can rarely be seen out of {uniform}"),
    "commutes": fact_type("Every morning {s} drives to {workplace}", "{s} is at {workplace} by seven on weekdays"),
    "payslip": fact_type("A payslip from {workplace} was lying on {s}'s kitchen table",
                  "{s} showed {d} a pay stub from {workplace}"),
    "colleague": fact_type("{colleague} who knows {s} said they had worked shifts together at {workplace}",
                    "At the diner, {colleague} greeted {s} as an old workmate from {workplace}"),
    "certificate": fact_type("A framed certificate from a {job} training course hangs in {s}'s hallway",
                      "{s} finished the licensing course for {job}s last year"),
    "shift_log": fact_type("The roster at {workplace} lists {s} on nearly every shift",
                    "{s}'s time card shows long weeks at {workplace}"),
    "membership": fact_type("{s} pays yearly dues to {club}", "{s}'s name is on the roll of {club}"),
    "photos": fact_type("{s}'s social media is full of photos from outings with {club}",
                 "A photo on {s}'s fridge shows {s} on a trip with {club}"),
    "receipt": fact_type("A receipt from {store} was tucked in {s}'s wallet",
                  "{d} found a crumpled receipt from {store} in {s}'s coat pocket"),
    "clerk": fact_type("A clerk at {store} remembered selling {weapon} to {s}",
                "The owner of {store} recognised {s}'s photo as a customer who bought {weapon}"),
    "estate_list": fact_type("The estate inventory of {s}'s {relative} leaves {weapon} to {s}",
                      "A lawyer's list of bequests left {weapon} to {s}"),
    "cousin": fact_type("A cousin recalled {s} carrying {weapon} out of {s_their} {relative}'s house after the funeral",
                 "After the funeral, relatives watched {s} accept {weapon} from the family lawyer"),
    "guest_saw": fact_type("A dinner guest once saw {weapon} {spot} at {s}'s house",
                    "{s}'s plumber noticed {weapon} {spot} last winter"),
    "dusty_shelf": fact_type("When {d} visited, {weapon} was still {spot}, with a faint outline in the dust around it",
                      "{d} saw {weapon} {spot} during the visit"),
    # motive
    "debt": fact_type("{s} borrowed {amount} from {v}", "{s} owed {v} {amount}", exp=(_debt_records,)),
    "demand": fact_type("{v} was pressing {s} to repay {amount} at once", "{v} wanted {amount} back from {s} immediately",
                 exp=(_demand_messages,)),
    "transfer": fact_type("Bank records show {v} wiring {amount} to {s} two years ago",
                   "A bank statement shows {amount} moving from {v}'s account to {s}'s"),
    "loan_note": fact_type("A note signed by {s} promising to repay {v} {amount} was in {v}'s desk",
                    "{v}'s desk held an IOU for {amount} in {s}'s handwriting"),
    "voicemail": fact_type("{s}'s phone held three angry voicemails from {v} about the money",
                    "{v} left {s} a voicemail saying the patience had run out"),
    "lawyer_letter": fact_type("A lawyer's letter sent for {v} gave {s} thirty days to pay {amount}",
                        "{s} had received a letter from {v}'s attorney about {amount}"),
    "knew_secret": fact_type("{v} had found out that {s} {secret}", "{v} knew that {s} {secret}",
                      exp=(_secret_evidence,)),
    "threat": fact_type("{v} was about to tell everyone that {s} {secret}",
                 "{v} had warned {s} that the truth would come out", exp=(_threat_evidence,)),
    "file_found": fact_type("In {v}'s apartment there was a folder of clippings about {s}'s past",
                     "{v} kept a folder labelled with {s}'s name, full of old records"),
    "bragged": fact_type("{v} had hinted at a dinner party that {s} was not who everyone thought",
                  "A friend heard {v} joke that {s} had a past worth reading about"),
    "draft_email": fact_type("{v}'s laptop held an unsent email to a reporter with {s}'s name in the subject line",
                      "An unsent message to the local paper about {s} was found on {v}'s laptop"),
    "quarrel": fact_type("Neighbours heard {v} shout at {s}: 'Next week everyone will know!'",
                  "A waiter saw {v} slam a folder on the table in front of {s}"),
    "fired": fact_type("{v} got {s} fired from {company}", "{s} lost a job at {company} because of {v}",
                exp=(_fired_evidence,)),
    "ruined": fact_type("Since losing the job, {s} has lost nearly everything", "{s}'s life fell apart after leaving {company}",
                 exp=(_ruined_evidence,)),
    "hr_memo": fact_type("A memo from {company}'s files, signed by {v}, recommends dismissing {s}",
                  "{v}'s signature is on the dismissal paperwork for {s} at {company}"),
    "coworker_fired": fact_type("A former coworker at {company} said {v} walked {s} out of the building personally",
                         "A coworker remembered {v} boxing up {s}'s desk at {company}"),
    "foreclosure": fact_type("The bank foreclosed on {s}'s house in the spring", "{s}'s house was sold at auction last year"),
    "moved_in": fact_type("{s} now sleeps on {s_their} sister's couch", "{s} has been living out of a car and a relative's spare room"),
    "affair": fact_type("{v} was secretly seeing {s}'s {partner}", "{s}'s {partner} and {v} were having an affair",
                 exp=(_affair_evidence,)),
    "found_out": fact_type("{s} had recently discovered the affair", "{s} learned about the affair a week before the death",
                    exp=(_found_out_evidence,)),
    "hotel": fact_type("A hotel clerk identified {v} and {s}'s {partner} as a couple who checked in together twice",
                "Hotel receipts in {v}'s car list two guests, one of them {s}'s {partner}"),
    "dinners": fact_type("A waiter remembered {v} holding hands with {s}'s {partner} over a candlelit dinner",
                  "{v} and {s}'s {partner} were seen dining alone at a quiet bistro out of town"),
    "phone_checked": fact_type("{s} admitted to reading {s_their} {partner}'s text messages one night",
                        "{s} went through {s_their} {partner}'s phone while the {partner} was asleep"),
    "scene_at_home": fact_type("That same night the neighbours heard dishes smashing in {s}'s kitchen",
                        "Right after that night, {s} threw {s_their} {partner}'s clothes onto the lawn"),
    # opportunity
    "near_scene": fact_type("{s} was near {scene} {time}", "{s} was close to {scene} {time}", exp=(_near_records,)),
    "alone": fact_type("{s} spent that evening alone", "Nobody was with {s} that night", exp=(_alone_records,)),
    "has_key": fact_type("{s} has a key to {scene}", "{s} can let {s_self} into {scene} at any hour",
                   exp=(_key_records,)),
    "no_alibi": fact_type("No one can vouch for {s} {time}", "{s} cannot account for the hours {time}",
                   exp=(_no_alibi_records,)),
    "parking": fact_type("A parking ticket was written for {s}'s car on the street beside {scene} {time}",
                  "A traffic camera caught {s}'s car turning into the lot at {scene} {time}"),
    "phone_ping": fact_type("{s}'s phone connected to the cell tower next to {scene} that night",
                     "Phone records place {s}'s phone beside {scene} for about an hour that night"),
    "cancelled_plans": fact_type("{s} cancelled a dinner with friends at the last minute that evening",
                          "{s} told {s_their} bowling league that {s_they} would skip that night's game"),
    "empty_house": fact_type("A neighbour saw no lights on at {s}'s house all evening",
                      "{s}'s dog barked alone in the house for hours, the neighbours said"),
    "key_copy": fact_type("A locksmith's records show a key to {scene} cut for {s} last month",
                   "{s} paid a hardware store to copy a key from {scene}"),
    "key_ring": fact_type("{d} noticed a key tagged with the name of {scene} on {s}'s key ring",
                   "A key marked for {scene} dangled from {s}'s key ring"),
    "story_changed": fact_type("{s} first said {s_they} had been at the cinema, then later said {s_they} had stayed home",
                        "{s} gave {d} two different accounts of that night"),
    "alibi_failed": fact_type("The friend {s} named as company that night said they never met",
                       "The cinema's ticket records show no sale to {s} that night"),
    # the suspicious fact
    "odd_act": fact_type("{s} {odd}", "People noticed that {s} {odd}", exp=(_odd_act_seen,)),
    "odd_reason": fact_type("{s} {odd_why}", "It turned out {s} {odd_why}", exp=(_odd_reason_detail,)),
    "odd_witness": fact_type("A neighbour told {d} that {s} {odd}", "{d} heard from a neighbour that {s} {odd}"),
    "odd_detail": fact_type("{s} {odd_detail}", "As {d} later learned, {s} {odd_detail}"),
}  # fmt: skip

# Validators: below each gold fact these words may not appear (the reader must infer it).
BANNED: Mapping[str, tuple[str, ...]] = {
    "means": ("means", "murder weapon", "murder", "murderer", "killer", "kill"),
    "motive": ("motive", "motives", "murder", "murderer", "killer", "kill"),
    "opportunity": ("opportunity", "murder", "murderer", "killer", "kill", "crime scene"),
    "suspicious": ("suspicious", "murder", "murderer", "killer", "kill", "innocent"),
}


def generate_murder(ch: Chooser, depth: int, names: People) -> dict[str, Any]:
    """F and the trees: two suspects (one the murderer), victim, scene, weapon, detective."""
    victim, detective, s1, s2 = ch.sample(names, 4)
    weapon_index = ch.randint(0, len(WEAPONS) - 1)
    weapon = WEAPONS[weapon_index]
    scene, time = ch.choice(SCENES), ch.choice(TIMES)
    murderer = ch.randint(0, 1)
    suspects: list[dict[str, Any]] = []
    for k, name in enumerate((s1, s2)):
        base = {**person("s", name), **person("v", victim), "d": f"Detective {detective[0]}",
                "weapon": weapon.name, "weapon_index": str(weapon_index), "scene": scene,
                "time": time}  # fmt: skip
        if k == murderer:
            has = dict.fromkeys(ELEMENTS, True)
            kinds = [*ELEMENTS]
        else:
            missing = ch.choice(ELEMENTS)
            has = {e: e != missing for e in ELEMENTS}
            kinds = [e for e in ELEMENTS if has[e]] + ["suspicious"]
            odd, why, detail, noun = ch.choice(SUSPICIOUS)
            base.update(odd=odd, odd_why=why, odd_detail=detail, odd_noun=noun)
        trees: dict[str, Node] = {}
        for kind in kinds:
            trees[kind] = grow(
                LIBRARY, Fact(kind, base), depth, ch, banned_pattern(BANNED[kind]), "gold"
            )
        suspects.append({"name": name[0], **has, "trees": trees})
    return {
        "victim": victim[0],
        "detective": detective[0],
        "scene": scene,
        "time": time,
        "weapon": weapon.name,
        "verb": weapon.verb,
        "suspects": suspects,
        "murderer": murderer,
    }
