/**
 * The webhook's certificates: a CA, serving certificates for the webhook Service's names, renewal
 * at two thirds of their lifetime, PEM in and out. This is the only module that imports Bouncy
 * Castle.
 */
package org.standalonecinder.certs;
