"""Spanish booking vocabulary (format: `kb_retrieval.query.vocabularies`)."""

from __future__ import annotations

VOCABULARY: dict[str, str] = {
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
}
