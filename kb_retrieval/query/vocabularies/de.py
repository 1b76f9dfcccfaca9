"""German booking vocabulary (format: `kb_retrieval.query.vocabularies`)."""

from __future__ import annotations

VOCABULARY: dict[str, str] = {
    "markers": "wir ich und ist sind nicht mit auf ein eine einen einem einer das dem"
    " zu zum zur wie wann warum gerne gern mochten mochte konnen konnten"
    " bitte danke uns unser unsere oder aber noch schon sehr auch wenn dass ob kann muss"
    " mussen gibt habe haben wird wurde wurden hallo grusse",
    "months": "januar februar marz april mai juni juli august september oktober november dezember",
    "phrases": """
        good day: guten+tag
        good morning: guten+morgen
        good evening: guten+abend
        hello: gruss+gott
        dear team: sehr+geehrte+damen+und+herren
        kind regards: mit+freundlichen+grussen | freundliche+grusse | viele+grusse
            | liebe+grusse | beste+grusse | herzliche+grusse | schone+grusse
        many thanks: vielen+dank
        how much: wie+viel | wieviel
        how many: wie+viele
        how old: wie+alt
        years old: jahre+alt
        single room: einzel+zimmer
    """,
    "words": """
        hello: hallo
        hi: moin servus
        dear: sehr+geehrte liebe lieber
        regards: grusse gruss
        thanks: danke
        deposit: anzahlung kaution
        balance: restzahlung restbetrag
        due: fallig
        pay: zahlen bezahlen uberweisen
        payment: zahlung bezahlung uberweisung
        price: preis preise
        cost: kosten kostet
        when: wann
        where: wo
        cancel: stornieren absagen
        cancellation: stornierung storno rucktritt absage
        cancellation fee: stornogebuhr stornogebuhren
        refund: ruckerstattung erstattung
        change: andern umbuchen anderung umbuchung
        booking: buchung reservierung
        book: buchen
        insurance: versicherung reiseversicherung
        cancellation insurance: reiseruckrittsversicherung reiseruecktrittsversicherung
        children: kinder kindern
        son: sohn
        daughter: tochter
        old: alt
        age: altersgrenze mindestalter
        year: jahr
        years: jahre jahren
        luggage: gepack reisegepack
        suitcase: koffer
        weight: gewicht
        meeting point: treffpunkt
        pickup: abholung
        start: beginn
        airport: flughafen
        station: bahnhof
        room: zimmer
        single room: einzelzimmer
        double room: doppelzimmer
        single supplement: einzelzimmerzuschlag
        vegetarian: vegetarisch vegetarische vegetarier
        allergy: allergie
        gluten free: glutenfrei
        doctor: arzt
        medical certificate: attest
        beginner: anfanger
        experience: erfahrung
        weather: wetter
        included: inbegriffen inklusive enthalten
        supplement: aufpreis zuschlag
        discount: rabatt ermassigung
        group: gruppe
        participants: teilnehmer
        guide: reiseleiter bergfuhrer fuhrer
        equipment: ausrustung
        rental: verleih miete
        rent: mieten leihen ausleihen
        boots: stiefel bergschuhe
        shoes: schuhe
        sleeping bag: schlafsack
        dog: hund
        pet: haustier
        wifi: wlan
        laundry: wasche wascherei
        time: uhrzeit zeit
        days: tage tagen
        week: woche
        night: nacht
        nights: nachte
        trip: reise
        excursion: ausflug
        course: kurs
        date: datum termin
        departure: abreise abfahrt
        arrival: anreise ankunft
        people: personen leute
        friends: freunde
        wife: ehefrau
        husband: ehemann
        question: frage
        possible: moglich
        free: kostenlos gratis
        bring: mitbringen
        need: brauchen benotigen
        sorry: entschuldigung
        we: wir
        i: ich
        and: und
        is: ist
        are: sind
        not: nicht
        with: mit
        for: fur
        on: auf
        a: ein eine einen einem einer
        the: das dem
        to: zu zum zur
        in: im
        how: wie
        why: warum
        would like: mochten mochte
        can: konnen kann
        could: konnten
        please: bitte
        us: uns
        our: unser unsere unseren
        or: oder
        but: aber
        still: noch
        already: schon
        very: sehr
        if: wenn ob
        that: dass
        must: muss mussen
        there is: gibt
        have: habe haben
        will: wird
        :  gerne gern
    """,
}
