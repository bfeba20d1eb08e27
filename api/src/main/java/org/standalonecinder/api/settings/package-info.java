/**
 * Settings as one typed table per command: flag, environment variable, parser, default and doc in
 * one place. Picocli only maps flags to text ({@link
 * org.standalonecinder.api.settings.SettingOptions}); the table reads, defaults and checks.
 */
package org.standalonecinder.api.settings;
