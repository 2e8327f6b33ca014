import { NavLink } from 'react-router';

export function SettingsNav() {
  return (
    <nav aria-label="Settings" className="tabs">
      <NavLink to="/settings/api-keys" className="tabs__link">
        API keys
      </NavLink>
      <NavLink to="/settings/account" className="tabs__link">
        Account
      </NavLink>
    </nav>
  );
}
