/**
 * The provisioner process put together: its parts built from the settings ({@code Wiring}), started
 * and stopped in order under leader election ({@code ProvisionerApp}), and the metrics of Cinder's
 * pools. Wiring only: what each part does lives in its own package.
 */
package org.standalonecinder.provisioner.app;
