"""Booking vocabulary of the languages guests mix into English e-mails: data, not logic.

`kb_retrieval.query.guest_language` detects a language by its `markers` (function words that no
English e-mail uses) and then reads its `phrases` and `words` as English. Each entry is
"english: foreign foreign ...": the English text on the left, every foreign word (folded: case and
accents do not matter) that reads as it on the right. An empty left side drops the words
(function words with no English content). A phrase entry joins its words with "+".

The lists are a general booking and travel vocabulary, written concept by concept (payments,
cancellation, people and ages, luggage, food, dates), not from any e-mail. A word that is also an
English word ("die", "gift", "kind", "rest", "also", "per", "camera") is never a marker, so an
English e-mail is never read as another language, and is left out of the entries unless it means
the same in both (a few, like Norwegian "barn", are kept: they are read only once the language is
detected).
"""

from __future__ import annotations

MIN_MARKERS = 2  # distinct marker words that make a language present in one message

MONTHS_EN: tuple[str, ...] = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip

LANGUAGES: dict[str, dict[str, str]] = {
    "de": {
        "markers": "wir ich und ist sind nicht mit auf ein eine einen einem einer das dem"
        " zu zum zur wie wann warum gerne gern mochten mochte konnen konnten"
        " bitte danke uns unser unsere oder aber noch schon sehr auch wenn dass ob kann muss"
        " mussen gibt habe haben wird wurde wurden hallo grusse",
        "months": "januar februar marz april mai juni juli august september oktober november"
        " dezember",
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
    },
    "nl": {
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
    },
    "nordic": {
        "markers": "og vi ikke jeg det som har hva hvor nar hvordan skal vil vaere eller ogsa mye"
        " hei takk mvh hilsen kan dere oss vart och jag inte vad hur ocksa hej tack",
        "months": "januar februar mars april mai juni juli august september oktober november"
        " desember",
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
    },
    "fr": {
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
    },
    "es": {
        "markers": "nosotros somos queremos una para por que cuando cuanto cuanta"
        " hola gracias saludos pero tambien esta nuestro nuestra usted ustedes podemos"
        " tenemos",
        "months": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre"
        " diciembre",
        "phrases": """
            good morning: buenos+dias
            good afternoon: buenas+tardes
            kind regards: un+saludo | saludos+cordiales | un+cordial+saludo
            how much: cuanto+cuesta | cuanto
            how many: cuantos | cuantas
            how old: cuantos+anos
            years old: anos
            single room: habitacion+individual
            sleeping bag: saco+de+dormir
            meeting point: punto+de+encuentro
            gluten free: sin+gluten
        """,
        "words": """
            hello: hola
            regards: saludos atentamente
            thanks: gracias
            deposit: deposito senal anticipo
            balance: saldo resto
            pay: pagar
            payment: pago
            price: precio
            cost: cuesta costo coste
            when: cuando
            where: donde
            cancel: cancelar anular
            cancellation: cancelacion anulacion
            refund: reembolso devolucion
            change: cambiar cambio
            booking: reserva
            book: reservar
            insurance: seguro
            children: ninos hijos
            child: nino
            son: hijo
            daughter: hija
            year: ano
            luggage: equipaje
            suitcase: maleta
            airport: aeropuerto
            station: estacion
            room: habitacion
            vegetarian: vegetariano vegetariana
            allergy: alergia
            doctor: medico
            weather: clima
            included: incluido incluida
            discount: descuento
            group: grupo
            participants: participantes
            equipment: equipo
            rent: alquilar alquiler
            shoes: zapatos botas
            dog: perro
            laundry: lavanderia
            time: hora
            days: dias
            day: dia
            week: semana
            night: noche
            nights: noches
            trip: viaje
            course: curso
            date: fecha
            departure: salida
            arrival: llegada
            people: personas
            friends: amigos
            wife: esposa mujer
            husband: marido esposo
            question: pregunta
            possible: posible
            free: gratis gratuito
            bring: traer llevar
            need: necesitamos necesito necesita
            we: nosotros
            are: somos
            want: queremos
            a: una
            for: para por
            that: que
            but: pero
            also: tambien
            is: esta
            our: nuestro nuestra
            you: usted ustedes
            can: podemos puedo
            have: tenemos
        """,
    },
    "it": {
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
    },
}
