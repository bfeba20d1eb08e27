/** The webhook's command line. The admission server itself comes with the webhook issue. */
package org.standalonecinder.webhook.cli;
