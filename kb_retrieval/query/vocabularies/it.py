"""Italian booking vocabulary (format: `kb_retrieval.query.vocabularies`)."""

from __future__ import annotations

VOCABULARY: dict[str, str] = {
    "markers": "siamo vorremmo che quando quanto buongiorno grazie saluti"
    " anche sono nostro nostra vostro noi io possiamo abbiamo ciao",
    "months": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre"
    " novembre dicembre",
    "phrases": """
        kind regards: cordiali+saluti | distinti+saluti
        how much: quanto+costa | quanto
        how old: quanti+anni
        years old: anni
        single room: camera+singola
        sleeping bag: sacco+a+pelo
        meeting point: punto+di+incontro
        gluten free: senza+glutine
    """,
    "words": """
        hello: buongiorno salve
        regards: saluti
        thanks: grazie
        deposit: acconto caparra deposito
        balance: saldo
        pay: pagare
        payment: pagamento
        price: prezzo
        cost: costo
        when: quando
        where: dove
        cancel: cancellare annullare disdire
        cancellation: cancellazione annullamento disdetta
        refund: rimborso
        change: cambiare modificare
        booking: prenotazione
        book: prenotare
        insurance: assicurazione
        children: bambini figli
        child: bambino
        son: figlio
        daughter: figlia
        year: anno
        luggage: bagaglio bagagli
        suitcase: valigia
        airport: aeroporto
        station: stazione
        vegetarian: vegetariano vegetariana
        allergy: allergia
        doctor: medico
        weather: meteo
        included: incluso inclusa compreso
        discount: sconto
        group: gruppo
        participants: partecipanti
        equipment: attrezzatura
        rent: noleggiare noleggio
        shoes: scarpe scarponi
        laundry: lavanderia bucato
        time: ora orario
        days: giorni
        day: giorno
        week: settimana
        night: notte
        nights: notti
        trip: viaggio
        course: corso
        departure: partenza
        arrival: arrivo
        people: persone
        friends: amici
        wife: moglie
        husband: marito
        question: domanda
        possible: possibile
        free: gratuito gratis
        bring: portare
        need: bisogno
        we: noi siamo
        would like: vorremmo vorrei
        that: che
        also: anche
        are: sono
        our: nostro nostra
        your: vostro vostra
        i: io
        can: possiamo posso
        have: abbiamo
    """,
}
