"""Dutch booking vocabulary (format: `kb_retrieval.query.vocabularies`)."""

from __future__ import annotations

VOCABULARY: dict[str, str] = {
    "markers": "wij ik zijn het een voor niet wanneer hoeveel graag bedankt groeten"
    " groet ook maar onze ons jullie kunnen willen welke hebben heeft zou zouden",
    "months": "januari februari maart april mei juni juli augustus september oktober november"
    " december",
    "phrases": """
        good day: goede+dag | goedendag
        good morning: goedemorgen | goede+morgen
        kind regards: met+vriendelijke+groet | met+vriendelijke+groeten
            | vriendelijke+groeten | hartelijke+groeten
        how much: hoeveel
        how old: hoe+oud
        years old: jaar+oud
    """,
    "words": """
        hello: hallo
        regards: groeten groet
        thanks: bedankt dank
        deposit: aanbetaling borg
        balance: restbedrag restbetaling
        pay: betalen
        payment: betaling
        price: prijs prijzen
        cost: kosten kost
        when: wanneer
        where: waar
        cancel: annuleren
        cancellation: annulering
        refund: terugbetaling restitutie
        change: wijzigen omboeken wijziging
        booking: boeking reservering
        book: boeken
        insurance: verzekering reisverzekering
        cancellation insurance: annuleringsverzekering
        children: kinderen
        son: zoon
        daughter: dochter
        old: oud
        year: jaar
        years: jaren
        luggage: bagage
        suitcase: koffer
        weight: gewicht
        meeting point: verzamelpunt ontmoetingspunt
        airport: luchthaven vliegveld
        station: station
        single room: eenpersoonskamer
        vegetarian: vegetarisch
        allergy: allergie
        doctor: dokter
        weather: weer
        included: inbegrepen inclusief
        supplement: toeslag
        discount: korting
        group: groep
        participants: deelnemers
        equipment: uitrusting
        rent: huren
        shoes: schoenen
        sleeping bag: slaapzak
        dog: hond
        pet: huisdier
        laundry: wasserij
        time: tijd
        days: dagen
        week: week
        night: nacht
        nights: nachten
        trip: reis
        excursion: excursie
        course: cursus
        date: datum
        departure: vertrek
        arrival: aankomst
        people: personen mensen
        friends: vrienden
        wife: vrouw
        husband: echtgenoot
        question: vraag
        possible: mogelijk
        free: gratis
        bring: meenemen
        need: nodig
        we: wij
        i: ik
        are: zijn
        the: het
        a: een
        for: voor
        not: niet
        what: wat
        how: hoe
        also: ook
        but: maar
        our: onze
        us: ons
        you: jullie
        can: kunnen
        want: willen
        which: welke
        have: hebben heeft
        would: zou zouden
        : graag
    """,
}
