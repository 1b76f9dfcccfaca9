"""French booking vocabulary (format: `kb_retrieval.query.vocabularies`)."""

from __future__ import annotations

VOCABULARY: dict[str, str] = {
    "markers": "nous vous je est une et avec dans sur pas que qui quand combien"
    " bonjour merci cordialement sommes voudrions pouvons notre nos votre vos mais aussi"
    " avons sont",
    "months": "janvier fevrier mars avril mai juin juillet aout septembre octobre novembre"
    " decembre",
    "phrases": """
        kind regards: bien+cordialement | meilleures+salutations
        how much: combien
        how old: quel+age
        years old: ans
        single room: chambre+individuelle | chambre+simple
        sleeping bag: sac+de+couchage
        meeting point: point+de+rendez-vous | lieu+de+rendez-vous
        gluten free: sans+gluten
    """,
    "words": """
        hello: bonjour salut
        regards: cordialement salutations amities
        thanks: merci
        deposit: acompte arrhes
        balance: solde
        pay: payer regler
        payment: paiement reglement
        price: prix tarif
        cost: cout coute
        when: quand
        where: ou
        cancel: annuler
        cancellation: annulation
        refund: remboursement rembourser
        change: modifier modification
        booking: reservation
        book: reserver
        insurance: assurance
        children: enfants
        child: enfant
        son: fils
        daughter: fille
        year: annee
        luggage: bagages bagage
        suitcase: valise
        weight: poids
        airport: aeroport
        station: gare
        room: chambre
        vegetarian: vegetarien vegetarienne
        allergy: allergie
        doctor: medecin
        medical certificate: certificat+medical
        weather: meteo
        included: inclus compris
        discount: reduction remise
        group: groupe
        participants: participants
        equipment: equipement materiel
        rent: louer
        shoes: chaussures
        dog: chien
        laundry: lessive blanchisserie
        time: heure
        days: jours
        day: jour
        week: semaine
        night: nuit
        nights: nuits
        trip: voyage sejour
        course: cours
        departure: depart
        arrival: arrivee
        people: personnes
        friends: amis
        wife: femme epouse
        husband: mari
        question: question
        possible: possible
        free: gratuit gratuite
        bring: apporter
        need: besoin
        we: nous
        you: vous
        i: je
        is: est
        a: une
        and: et
        with: avec
        in: dans
        on: sur
        not: pas
        that: que
        who: qui
        are: sommes sont
        would like: voudrions voudrais
        can: pouvons pouvez peut
        our: notre nos
        your: votre vos
        but: mais
        also: aussi
        have: avons avez
    """,
}
