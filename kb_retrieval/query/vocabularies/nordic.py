"""Norwegian, Danish and Swedish (one group) booking vocabulary (format: `kb_retrieval.query.vocabularies`)."""

from __future__ import annotations

VOCABULARY: dict[str, str] = {
    "markers": "og vi ikke jeg det som har hva hvor nar hvordan skal vil vaere eller ogsa mye"
    " hei takk mvh hilsen kan dere oss vart och jag inte vad hur ocksa hej tack",
    "months": "januar februar mars april mai juni juli august september oktober november desember",
    "phrases": """
        kind regards: med+vennlig+hilsen | vennlig+hilsen | beste+hilsen
        how much: hvor+mye | hvor+mykje
        how many: hvor+mange
        how old: hvor+gammel
        years old: ar+gammel | ar+gamle
    """,
    "words": """
        hi: hei hej
        regards: mvh hilsen hilsener
        thanks: takk tak
        deposit: depositum forskudd innskudd
        balance: restbelop restbetaling
        due: forfaller forfall
        pay: betale
        payment: betaling
        price: pris priser
        cost: koster kostnad
        when: nar
        where: hvor
        cancel: avbestille kansellere
        cancellation: avbestilling kansellering
        refund: refusjon tilbakebetaling
        change: endre endring
        booking: bestilling booking
        book: bestille
        insurance: forsikring reiseforsikring
        children: barn barna
        son: sonn
        daughter: datter
        old: gammel gamle
        year: ar
        luggage: bagasje
        suitcase: koffert
        weight: vekt
        meeting point: motested
        airport: flyplass
        room: rom
        single room: enkeltrom
        vegetarian: vegetarisk vegetar
        allergy: allergi
        doctor: lege
        weather: vaer
        included: inkludert
        supplement: tillegg
        discount: rabatt
        group: gruppe
        participants: deltakere
        guide: guide
        equipment: utstyr
        rent: leie
        sleeping bag: sovepose
        dog: hund
        laundry: klesvask vaskeri
        time: tid
        days: dager
        week: uke uka
        night: natt
        nights: netter
        trip: tur reise
        course: kurs
        date: dato
        departure: avreise
        arrival: ankomst
        people: personer folk
        friends: venner
        wife: kone
        husband: ektemann
        question: sporsmal
        possible: mulig
        free: gratis
        bring: ta+med
        need: trenger
        we: vi
        i: jeg
        and: og
        are: er
        not: ikke
        it: det
        that: som
        on: pa
        with: med
        have: har
        of: av
        what: hva
        how: hvordan
        shall: skal
        will: vil
        be: vaere
        or: eller
        also: ogsa
        much: mye
        many: mange
        can: kan
        you: dere
        us: oss
        our: vart vare
        and: och
        i: jag
        not: inte
        what: vad
        how: hur
        also: ocksa
        thanks: tack
    """,
}
