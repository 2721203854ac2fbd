// Stands in for `pkcs11js` in the single executable (scripts/sea/bundle.mjs `alias`): a
// native addon (.node) cannot be bundled into the executable's one script. The signer's
// constants read as undefined and opening a device fails with a clear message; HardwareDevice
// mode (SIGNING_DEVICE=pkcs11) runs with `npm run local` (docs/local-host.md).
'use strict';
class PKCS11 {
  constructor() {
    throw new Error('PKCS#11 signing devices are not available in the single executable (no native addon can be embedded): run the local host with `npm run local` for HardwareDevice mode');
  }
}
class Pkcs11Error extends Error {}
module.exports = { PKCS11, Pkcs11Error };
