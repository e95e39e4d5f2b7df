/**
 * The signed-in API key, for this tab only: sessionStorage dies with the tab and is not shared with
 * other tabs; the key is never put in a URL, a cookie or localStorage.
 */
const STORAGE_KEY = 'gitops-scaffolder.api-key';

export const session = {
  key(): string | null {
    return sessionStorage.getItem(STORAGE_KEY);
  },
  signIn(key: string): void {
    sessionStorage.setItem(STORAGE_KEY, key);
  },
  signOut(): void {
    sessionStorage.removeItem(STORAGE_KEY);
  },
};
